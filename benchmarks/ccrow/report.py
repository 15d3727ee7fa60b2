"""The row's report: per window and summary condition, each session played by both agents side by side,
and the issue's targets checked per pair."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from benchmarks.ccrow.measure import MEASURES, share
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
    """What the cost is made of, per session and agent: the first request, the context the
    session's steps added (the same steps for both: the tools' output as each agent shapes it),
    and the cost of main, summary and memory requests."""
    lines = [
        f"### Where the cost differs ({condition} summaries)",
        "",
        "| window | session | agent | first request | context added by the steps | main / summary / memory cost (K units) |",
        "|---|---|---|---:|---:|---|",
    ]
    for result in sorted(results, key=lambda r: (-r.window, r.session, r.agent)):
        if result.condition != condition or result.agent not in ("claude-code", "agent-repl"):
            continue
        split = " / ".join(
            f"{result.cost_by_kind.get(k, 0.0) / 1000:,.0f}" for k in ("main", "summary", "memory")
        )
        lines.append(
            f"| {_k(result.window)} | {result.session} | {result.agent} | {_k(result.first_context)} | "
            f"{_k(result.context_added)} | {split} |"
        )
    return [*lines, ""]


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
        "holds verbatim (typed prompts sent so far, module paths read so far, todo items, needle facts).",
        "Windows: Claude Code gets `--autocompact N` (its flag for the window it compacts in), agent-repl",
        "`context_window` N, and the emulator refuses any prompt over N (an overflow).",
        "Summaries: " + "; ".join(f"{c}: {s}" for c, s in sources.items()) + ".",
        "",
    ]
    for window in windows:
        for condition in conditions:
            out += section(window, condition, grouped)
    out += drivers(results, conditions[0])
    out += levers(results, conditions[0])
    return "\n".join(out) + "\n"
