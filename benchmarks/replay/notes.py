"""The closing note of BENCHMARKS.md: where agent-repl misses a criterion, why, and what would fix
it, written from the run's own numbers (the causes are named only when the numbers show them)."""

from __future__ import annotations

from collections.abc import Sequence

from agent_repl.context.thresholds import autocompact_threshold, effective_window
from agent_repl.emulator.models import default_model_table
from benchmarks.replay.metrics import Aggregate, RunResult
from benchmarks.replay.report import OURS, aggregates, cheapest_clean

OWN_SUMMARY = "agent-repl with its own summary"

_SPEC = default_model_table()["claude-sonnet-5-5"]
_OUTPUT_UNITS = _SPEC.output_usd_per_mtok / _SPEC.input_usd_per_mtok


def _k(value: float) -> str:
    return f"{value / 1000:,.0f}K"


def breakdown(agg: Aggregate) -> dict[str, float]:
    """Cost units by where they come from."""
    def total(key: str) -> int:
        return sum(r.totals.get(key, 0) for r in agg.runs)

    def output(kind: str) -> int:
        return sum(r.output_by_kind.get(kind, 0) for r in agg.runs)

    return {
        "cache reads": _SPEC.cache_read_multiplier * total("cache_read_tokens"),
        "cache writes": _SPEC.cache_write_5m_multiplier * total("cache_write_5m_tokens")
        + _SPEC.cache_write_1h_multiplier * total("cache_write_1h_tokens"),
        "uncached input": float(total("input_tokens")),
        "replies": _OUTPUT_UNITS * output("main"),
        "summaries": _OUTPUT_UNITS * output("summary"),
        "memory notes": _OUTPUT_UNITS * output("memory"),
    }


def _parts(agg: Aggregate) -> str:
    return ", ".join(f"{name} {_k(units)}" for name, units in breakdown(agg).items() if units >= 500)


def _window_note(results: Sequence[RunResult], window: int, strategies: Sequence[str], variants: Sequence[str]) -> list[str]:
    aggs = aggregates(results, window, strategies)
    ours = next((a for a in aggs if a.strategy == OURS), None)
    if ours is None or not ours.runs:
        return []
    best = cheapest_clean(aggs)
    users = ours.share("users_kept", "users_total") or 0.0
    snips = sum(r.records.get("snip", 0) for r in ours.runs)
    rewrites = int(ours._sum("prefix_rewrites"))
    compactions = int(ours._sum("compactions"))
    memory = breakdown(ours)["memory notes"]
    threshold = autocompact_threshold(effective_window(window))
    lines = [f"**{window // 1000}K window.**"]
    missed = False
    if ours.overflows or ours.stopped:
        missed = True
        names = ", ".join(sorted({r.trajectory for r in ours.runs if r.overflow_errors or not r.completed}))
        lines.append(f"- Overflows: agent-repl hit {ours.overflows} prompt-too-long errors ({names}).")
    if best is not None and best.strategy != OURS:
        missed = True
        lines.append(
            f"- Cost: {best.strategy} is the cheapest strategy without overflows, {_k(best.cost_units)} units against "
            f"agent-repl's {_k(ours.cost_units)} ({ours.cost_units / best.cost_units - 1:+.0%}). agent-repl's units: "
            f"{_parts(ours)}; {best.strategy}'s: {_parts(best)}."
        )
    cheaper = [a for a in aggs if a.strategy != OURS and a.runs and not a.stopped and a.cost_units < ours.cost_units]
    if best is not None and best.strategy == OURS and cheaper:
        lines.append(
            "- Cost: agent-repl is the cheapest strategy without overflow errors, but "
            + ", ".join(f"{a.strategy} ({_k(a.cost_units)}, {a.overflows} overflow errors, recovered)" for a in cheaper)
            + f" cost less than its {_k(ours.cost_units)}."
        )
    if ours.cache_read_share < 0.90:
        missed = True
        lines.append(
            f"- Cache: agent-repl read {ours.cache_read_share:.1%} of its input from the cache. {rewrites} of its main "
            f"requests wrote more than half of their prompt again; it made {snips} automatic snips and {compactions} "
            f"compactions (each one starts a new prefix), and compacts at {threshold:,} tokens, "
            f"{threshold / window:.0%} of this window (its largest prompt was {ours.peak_input:,})."
        )
    if users < 1.0:
        missed = True
        lost = [f"{r.trajectory} ({r.users_kept}/{r.users_total})" for r in ours.runs if r.users_kept < r.users_total]
        lines.append(f"- Retention: user messages missing from the final view in {', '.join(lost)}.")
    if not missed:
        lines.append("- agent-repl meets every criterion at this window.")
    for name in variants:
        variant = Aggregate(name, [r for r in results if r.window == window and r.strategy == name])
        if not variant.runs:
            continue
        lines.append(
            f"- Measured: {name} costs {_k(variant.cost_units)} ({variant.cost_units / ours.cost_units - 1:+.0%} against "
            f"the defaults), reads {variant.cache_read_share:.1%} from the cache, overflows {variant.overflows} times, "
            f"keeps {variant.share('users_kept', 'users_total') or 0:.0%} of user messages and "
            f"{variant.share('files_kept', 'files_total') or 0:.0%} of file paths."
        )
    if snips:
        lines.append(
            f"- Why (automatic snip): it ran {snips} times. It runs only while autocompact is off or its circuit "
            "breaker has opened, and each snip changes the prompt before the newest message, so the cached prefix "
            "from the snip point on is written again."
        )
    if memory >= 0.05 * ours.cost_units:
        lines.append(
            f"- Why (session memory): the background notes cost {_k(memory)} units of output ({memory / ours.cost_units:.0%} "
            "of the total): each extraction writes the whole nine-section notes again at the output price (5x input). "
            "What would fix it: extract less often, or cap or diff the notes."
        )
    if ours.cache_read_share < 0.90:
        main = int(ours._sum("main_requests"))
        shares = ", ".join(f"{r.trajectory} {r.cache_read_share:.2f}" for r in sorted(ours.runs, key=lambda r: -r.cache_read_share))
        lines.append(
            f"- Why (cache share): by trajectory: {shares}. Every new tool result is written to the cache once, whatever "
            f"the strategy, and each of the {compactions} compactions over {main} main requests starts a new prefix that "
            f"is written again; where one Read brings thousands of tokens into a window of a few tens of thousands, "
            "each written token is read only a few times before the next compaction (the sessions with small outputs "
            "read more)."
        )
    own = Aggregate(OWN_SUMMARY, [r for r in results if r.window == window and r.strategy == OWN_SUMMARY])
    if own.runs and compactions:
        lines.append(
            f"- The API's summary against our own: with on-demand compaction (the defaults) agent-repl costs "
            f"{_k(ours.cost_units)} and keeps {ours.share('files_kept', 'files_total') or 0:.0%} of file paths; with "
            f"our nine-section summary {_k(own.cost_units)} ({own.cost_units / ours.cost_units - 1:+.0%}) and "
            f"{own.share('files_kept', 'files_total') or 0:.0%}. The API's summary keeps the thinking of the turns "
            "kept after it (ours must leave it out: its prefix changed) and costs one request without a fork of the "
            "whole view; the emulator writes both summaries the same extractive way, so what they keep is alike here."
        )
    return lines


def closing_note(results: Sequence[RunResult], strategies: Sequence[str], variants: Sequence[str] = ()) -> list[str]:
    lines: list[str] = []
    for window in sorted({r.window for r in results}, reverse=True):
        lines += [*_window_note(results, window, strategies, variants), ""]
    return lines
