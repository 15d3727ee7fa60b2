"""The row's report: per window and summary condition, each session played by both agents side by side,
and the issue's targets checked per pair."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.ccrow.measure import MEASURES, PARTS, Compaction, share
from benchmarks.ccrow.runners import RowResult

COST_TARGET = 0.8
EXTRA_COMPACTIONS = 1


def _k(tokens: int) -> str:
    return f"{tokens / 1000:.0f}K"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def _requests(result: RowResult) -> str:
    order = ("main", "summary", "memory", "side")
    return " / ".join(str(result.requests.get(kind, 0)) for kind in order)


def row(result: RowResult, ratio: str) -> str:
    comps = result.compactions
    at = ", ".join(_k(c.before) for c in comps) or "-"
    kept = ", ".join(_k(c.after) for c in comps) or "-"
    keeps = " / ".join(_pct(share(comps, m)) for m in MEASURES)
    status = "yes" if result.completed else f"{result.turns_done}/{result.turns}: {result.note}"
    own = "" if result.own_compactions is None else f" ({result.own_compactions})"
    split = " / ".join(
        f"{result.cost_by_kind.get(k, 0.0) / 1000:,.0f}" for k in ("main", "summary", "memory")
    )
    return (
        f"| {result.session} | {result.agent} | {result.cost_units / 1000:,.0f}K | {split} | {ratio} | {len(comps)}{own} | {at} | {kept} | "
        f"{keeps} | {result.overflows} | {_requests(result)} | {status} |"
    )


HEADER = (
    "| session | agent | cost (K units) | of it main / summary / memory | vs CC | compactions (own record) | "
    "context at each | context after each | kept: users / paths / todos / needles | overflows | "
    "requests main / summary / memory / side | finished |\n"
    "|---|---|---:|---|---:|---:|---|---|---|---:|---|---|"
)


@dataclass
class Verdict:
    cost: bool
    compactions: bool
    retention: bool
    ratio: float

    @property
    def met(self) -> bool:
        return self.cost and self.compactions and self.retention


def verdict(ours: RowResult, theirs: RowResult) -> Verdict:
    ratio = ours.cost_units / theirs.cost_units if theirs.cost_units else float("inf")
    kept = (
        all(
            (share(ours.compactions, m) or 0.0) >= (share(theirs.compactions, m) or 0.0) - 1e-9
            for m in MEASURES
            if ours.compactions or theirs.compactions
        )
        if ours.compactions
        else True
    )
    return Verdict(
        cost=ratio <= COST_TARGET,
        compactions=len(ours.compactions) <= len(theirs.compactions) + EXTRA_COMPACTIONS,
        retention=kept,
        ratio=ratio,
    )


def pairs(results: Iterable[RowResult]) -> dict[tuple[int, str, str], dict[str, RowResult]]:
    grouped: dict[tuple[int, str, str], dict[str, RowResult]] = {}
    for result in results:
        grouped.setdefault((result.window, result.condition, result.session), {})[result.agent] = result
    return grouped


def section(
    window: int, condition: str, grouped: dict[tuple[int, str, str], dict[str, RowResult]]
) -> list[str]:
    lines = [f"### {_k(window)} window, {condition} summaries", "", HEADER]
    misses = []
    for (w, c, session), both in sorted(grouped.items()):
        if (w, c) != (window, condition) or len(both) < 2:
            continue
        ours, theirs = both["agent-repl"], both["claude-code"]
        check = verdict(ours, theirs)
        lines.append(row(theirs, "1.00x"))
        lines.append(row(ours, f"{check.ratio:.2f}x"))
        missed = [
            name
            for name, ok in (
                ("cost", check.cost),
                ("compactions", check.compactions),
                ("retention", check.retention),
            )
            if not ok
        ]
        if missed:
            misses.append(f"- {session}: target missed: {', '.join(missed)}")
    lines += ["", *(misses or ["- every target met on every session"]), ""]
    return lines


def levers(results: list[RowResult], condition: str) -> list[str]:
    """agent-repl's lever variants next to its defaults and Claude Code, per window and session."""
    variants = [r for r in results if r.condition == condition and r.agent not in ("claude-code",)]
    if {r.agent for r in variants} <= {"agent-repl"}:
        return []
    lines = [
        f"### Levers ({condition} summaries; agent-repl with one thing changed, not product settings)",
        "",
        "`no session memory`: no session-memory requests. `benchmarks/ccrow/levers.py`.",
        "",
        "| window | session | agent | cost (K units) | vs CC | compactions | kept: users / paths / todos / needles |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    cc = {(r.window, r.session): r for r in results if r.condition == condition and r.agent == "claude-code"}
    for result in sorted(variants, key=lambda r: (-r.window, r.session, r.agent)):
        base = cc.get((result.window, result.session))
        ratio = f"{result.cost_units / base.cost_units:.2f}x" if base and base.cost_units else "n/a"
        keeps = " / ".join(_pct(share(result.compactions, m)) for m in MEASURES)
        lines.append(
            f"| {_k(result.window)} | {result.session} | {result.agent} | {result.cost_units / 1000:,.0f}K | "
            f"{ratio} | {len(result.compactions)} | {keeps} |"
        )
    return [*lines, ""]


def drivers(results: list[RowResult], condition: str) -> list[str]:
    """What the cost is made of, per session and agent: the first request, the tokens of the tool
    results (the same calls for both, their output as each agent's tools shape it), the cost of
    main, summary and memory requests, and what the main requests' cost pays for."""
    lines = [
        f"### Where the cost differs ({condition} summaries)",
        "",
        "Main requests' cost by what it pays for: cache writes (1.25x), cache reads (0.1x), uncached input, output (5x).",
        "",
        "| window | session | agent | first request | tool output | main / summary / memory cost (K units) | "
        "main: written / read / uncached / output (K units) |",
        "|---|---|---|---:|---:|---|---|",
    ]
    for result in sorted(results, key=lambda r: (-r.window, r.session, r.agent)):
        if result.condition != condition or result.agent not in ("claude-code", "agent-repl"):
            continue
        split = " / ".join(
            f"{result.cost_by_kind.get(k, 0.0) / 1000:,.0f}" for k in ("main", "summary", "memory")
        )
        parts = " / ".join(f"{result.main_parts.get(k, 0.0) / 1000:,.0f}" for k in PARTS) if result.main_parts else "n/a"
        lines.append(
            f"| {_k(result.window)} | {result.session} | {result.agent} | {_k(result.first_context)} | "
            f"{_k(result.tool_output)} | {split} | {parts} |"
        )
    return [*lines, ""]


def _span(values: Sequence[float], fmt: str = "{:.2f}") -> str:
    if not values:
        return "n/a"
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return low if low == high else f"{low}-{high}"


def findings(results: list[RowResult], conditions: list[str]) -> list[str]:
    """The targets per window under the acceptance condition (the first), what Claude Code and
    agent-repl keep under the others, and what each lever alone brings the cost ratio to."""
    grouped = pairs(results)
    lines = ["### Findings", ""]
    for window in sorted({r.window for r in results}, reverse=True):
        both = [
            b for (w, c, _), b in sorted(grouped.items()) if w == window and c == conditions[0] and len(b) > 1
        ]
        checks = [verdict(b["agent-repl"], b["claude-code"]) for b in both]
        ours = [len(b["agent-repl"].compactions) for b in both]
        theirs = [len(b["claude-code"].compactions) for b in both]
        lines.append(
            f"- {_k(window)}, {conditions[0]} summaries, {len(both)} sessions: agent-repl costs "
            f"{_span([c.ratio for c in checks])}x Claude Code (target at most {COST_TARGET}x: met on "
            f"{sum(c.cost for c in checks)}); compactions {_span(ours, '{:.0f}')} against "
            f"{_span(theirs, '{:.0f}')} (at most Claude Code's + {EXTRA_COMPACTIONS}: met on "
            f"{sum(c.compactions for c in checks)}); retention at least Claude Code's on "
            f"{sum(c.retention for c in checks)}; overflows {sum(b['agent-repl'].overflows for b in both)} "
            f"against {sum(b['claude-code'].overflows for b in both)}."
        )
        added = [
            b["agent-repl"].tool_output / b["claude-code"].tool_output
            for b in both
            if b["claude-code"].tool_output
        ]
        memory = [b["agent-repl"].cost_by_kind.get("memory", 0.0) / b["agent-repl"].cost_units for b in both]
        summaries = [
            (
                b["agent-repl"].cost_by_kind.get("summary", 0.0),
                b["claude-code"].cost_by_kind.get("summary", 0.0),
            )
            for b in both
        ]
        lines.append(
            f"- {_k(window)}, what differs: the same calls' output is {_span(added)}x as many tokens in agent-repl; "
            f"session-memory requests are {_span(memory, '{:.0%}')} of agent-repl's cost; summary requests "
            f"cost {_span([o / 1000 for o, _ in summaries], '{:.0f}')}K units against "
            f"{_span([t / 1000 for _, t in summaries], '{:.0f}')}K."
        )
        lines += _where_it_goes(window, both)
        for condition in conditions[1:]:
            runs = [b for (w, c, _), b in grouped.items() if w == window and c == condition and len(b) > 1]
            kept = {
                agent: " / ".join(
                    _pct(share([x for b in runs for x in b[agent].compactions], m)) for m in MEASURES
                )
                for agent in ("claude-code", "agent-repl")
            }
            lines.append(
                f"- {_k(window)}, {condition} summaries: kept users / paths / todos / needles: Claude Code "
                f"{kept['claude-code']}, agent-repl {kept['agent-repl']}."
            )
        variants = sorted(
            {r.agent for r in results if r.window == window and r.agent not in ("agent-repl", "claude-code")}
        )
        for name in variants:
            ratios = [
                b[name].cost_units / b["claude-code"].cost_units
                for (w, c, _), b in grouped.items()
                if w == window and c == conditions[0] and name in b and "claude-code" in b
            ]
            lines.append(f"- {_k(window)}, lever `{name}`: {_span(ratios)}x Claude Code.")
    return [*lines, ""]


def _where_it_goes(window: int, both: list[dict[str, RowResult]]) -> list[str]:
    """The main requests' cache writes (the tool output, written once) as a share of Claude Code's
    cost, and what is left for the rest: the floor the cost target meets."""
    runs = [b for b in both if b["agent-repl"].main_parts and b["claude-code"].cost_units]
    if not runs:
        return []
    written = [b["agent-repl"].main_parts["written"] / b["claude-code"].cost_units for b in runs]
    reads = [b["agent-repl"].main_parts["read"] / b["claude-code"].cost_units for b in runs]
    theirs = [b["claude-code"].main_parts.get("read", 0.0) / b["claude-code"].cost_units for b in runs]
    rest = [
        (b["agent-repl"].cost_units - b["agent-repl"].cost_by_kind.get("main", 0.0)) / b["claude-code"].cost_units
        for b in runs
    ]
    return [
        f"- {_k(window)}, where it goes (shares of Claude Code's cost): agent-repl's main requests' cache writes "
        f"{_span(written)} (the same tool output as Claude Code's, written once at 1.25x), their cache reads "
        f"{_span(reads)} (Claude Code's {_span(theirs)}), its summary and memory requests {_span(rest)}; at most "
        f"{COST_TARGET}x leaves {_span([COST_TARGET - w for w in written])} for reads, compactions and output."
    ]


def load_results(path: Path) -> list[RowResult]:
    """The runs a previous invocation saved beside its report (`claude_code_row.json`)."""
    results = []
    for raw in json.loads(path.read_text(encoding="utf-8")):
        raw["compactions"] = [
            Compaction(c["before"], c["after"], {k: (v[0], v[1]) for k, v in c["kept"].items()})
            for c in raw["compactions"]
        ]
        results.append(RowResult(**raw))
    return results


def render(
    results: list[RowResult], *, command: str, version: str, wall_minutes: float, sources: dict[str, str]
) -> str:
    grouped = pairs(results)
    windows = sorted({r.window for r in results}, reverse=True)
    conditions = list(dict.fromkeys(r.condition for r in results))
    out = [
        "## The real Claude Code as a row",
        "",
        f"`{command}` with Claude Code {version}; {wall_minutes:.1f} min on this machine.",
        "",
        "Both agents play the same scripted sessions (an emulated model that answers each main request with",
        "the script's next step), running their real tools (`Read`, `Bash`) over the same copy of a real",
        "source tree; summary requests are answered by the condition's summarizer for both. Cost in units",
        "of one uncached input token at claude-sonnet-5-5 prices (cache writes 1.25x, reads 0.1x, output 5x),",
        "summaries included. Context sizes are the prompt of the last main request before each compaction and of",
        "the first after it. Kept: the share, over every compaction, of what the first request after it still",
        "holds verbatim (typed prompts sent so far, module paths read before it, todo items, needle facts).",
        "Windows: Claude Code gets `--autocompact N` (its flag for the window it compacts in), agent-repl",
        "`context_window` N, and the emulator refuses any prompt over N (an overflow).",
        "Summaries: " + "; ".join(f"{c}: {s}" for c, s in sources.items()) + ".",
        "",
    ]
    out += findings(results, conditions)
    for window in windows:
        for condition in conditions:
            out += section(window, condition, grouped)
    out += drivers(results, conditions[0])
    out += levers(results, conditions[0])
    return "\n".join(out) + "\n"
