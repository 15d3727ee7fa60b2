"""The closing note of BENCHMARKS.md: where agent-repl misses a criterion, why, and what would fix
it, written from the run's own numbers (the causes are named only when the numbers show them)."""

from __future__ import annotations

from collections.abc import Sequence

from agent_repl.context.state import PipelineConfig
from agent_repl.context.thresholds import autocompact_threshold, effective_window
from agent_repl.emulator.models import default_model_table
from benchmarks.replay.metrics import Aggregate, RunResult
from benchmarks.replay.report import (
    MEASURED,
    OURS,
    aggregates,
    cheapest_clean,
    cheapest_completed_peer,
    checks,
)

PAUSES_CONDITION = "pauses"

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


def _measured(name: str, variant: Aggregate, ours: Aggregate) -> str:
    return (
        f"- Measured: {name} costs {_k(variant.cost_units)} ({variant.cost_units / ours.cost_units - 1:+.0%} against "
        f"the defaults), reads {variant.cache_read_share:.1%} from the cache, overflows {variant.overflows} times, "
        f"rewrites {int(variant._sum('pause_rewrites'))} prompts after a pause, keeps "
        f"{variant.share('users_kept', 'users_total') or 0:.0%} of user messages and "
        f"{variant.share('files_kept', 'files_total') or 0:.0%} of file paths."
    )


def _closest(
    results: Sequence[RunResult], window: int, variants: Sequence[str], peer: Aggregate | None, ours: Aggregate
) -> str | None:
    """The public lever without overflows that came closest to the cost target, in words."""
    if peer is None:
        return None
    public = [v for v in variants if "(not public)" not in v]
    clean = [a for a in aggregates(results, window, public) if a.runs and not a.overflows and not a.stopped]
    best = min(clean, key=lambda a: a.cost_units, default=None)
    if best is None:
        return None
    text = f"the cheapest without overflows is {best.strategy}: {_k(best.cost_units)}, {best.cost_units / peer.cost_units:.2f}x {peer.strategy}"
    if best.cost_units >= ours.cost_units:
        return f"none measured here costs less than the defaults ({text[4:]})"
    files = best.share("files_kept", "files_total") or 0.0
    users = best.share("users_kept", "users_total") or 0.0
    peer_files = peer.share("files_kept", "files_total") or 0.0
    if files < peer_files or users < 1.0:
        text += (
            f", but it keeps {files:.0%} of file paths (against {peer.strategy}'s {peer_files:.0%}) and {users:.0%} "
            "of user messages, below the retention the defaults must keep, so it is not the default"
        )
    return text


def _window_note(results: Sequence[RunResult], window: int, strategies: Sequence[str], variants: Sequence[str]) -> list[str]:
    aggs = aggregates(results, window, strategies)
    ours = next((a for a in aggs if a.strategy == OURS), None)
    if ours is None or not ours.runs:
        return []
    peer = cheapest_clean(aggs, peers_only=True) or cheapest_completed_peer(aggs)
    found = {c.what: c for c in checks(aggs)}
    compactions = int(ours._sum("compactions"))
    threshold = autocompact_threshold(effective_window(window))
    lines = [f"**{window // 1000}K window.**"]
    missed = [c for c in found.values() if c.met is False]
    if not missed:
        lines.append("- agent-repl meets every criterion that has something to compare with at this window.")
    for check in missed:
        lines.append(f"- Not met: {check.what} ({check.detail}).")
    lines += [f"- Not comparable: {c.what} ({c.detail})." for c in found.values() if c.met is None]
    if ours.overflows or ours.stopped:
        stopped = [f"{r.trajectory} ({r.overflow_errors} overflow errors{', stopped' if not r.completed else ''})" for r in ours.runs if r.overflow_errors or not r.completed]
        lines.append(
            f"- Why (overflows): {', '.join(stopped)}. A tool result that arrives while the view is near the window "
            "makes the next request too long; the reactive compaction then has to summarize a view past the window."
        )
    if peer is not None and ours.cost_units > 0.85 * peer.cost_units:
        closest = _closest(results, window, variants, peer, ours)
        lines.append(
            f"- Why (cost): agent-repl's units: {_parts(ours)}; {peer.strategy}'s: {_parts(peer)}."
            + (f" Of the levers, {closest}." if closest else "")
        )
    if peer is not None and compactions > peer._sum("compactions"):
        lines.append(
            f"- Compactions: agent-repl compacts {compactions} times, {peer.strategy} {int(peer._sum('compactions'))}. "
            "Each summary costs what a real one does here (realistic summaries); what a real model's summary would "
            "leave out at each of them is measured under lossy summaries (the retention section), the wait for each "
            "is not in these figures."
        )
    share = found.get("cache-read share >= 0.90, or the limit of these prompts")
    if share is not None and not share.met:
        by_run = ", ".join(
            f"{r.trajectory} {r.cache_read_share:.2f}" for r in sorted(ours.runs, key=lambda r: -r.cache_read_share)
        )
        early = window >= PipelineConfig().cost_trigger_min_window
        when = f"at {threshold:,} tokens, {threshold / window:.0%} of this window" + (
            ", or earlier where the cost-aware trigger finds that summarizing pays" if early else ""
        )
        lines.append(
            f"- Why (cache share): by trajectory {by_run}. Every new tool result is written to the cache once, and each "
            f"of the {compactions} compactions ({when}) starts a prefix that is written again."
            + (
                " Compacting early reads less in all, which lowers the cost and the share of reads with it (the row "
                "without the cost-aware trigger below shows the other side)."
                if early
                else ""
            )
        )
    for name in variants:
        variant = Aggregate(name, [r for r in results if r.window == window and r.strategy == name and r.condition == MEASURED])
        if variant.runs:
            lines.append(_measured(name, variant, ours))
    paused = aggregates(results, window, [OURS, *variants], PAUSES_CONDITION)
    base = next((a for a in paused if a.strategy == OURS), None)
    if base is not None:
        lines.append(
            f"- Under pauses, agent-repl costs {_k(base.cost_units)} and rewrites {int(base._sum('pause_rewrites'))} of "
            f"{int(base._sum('pauses'))} prompts after a pause:"
        )
        lines += ["  " + _measured(a.strategy, a, base) for a in paused if a.strategy != OURS]
    own = Aggregate(OWN_SUMMARY, [r for r in results if r.window == window and r.strategy == OWN_SUMMARY and r.condition == MEASURED])
    if own.runs and compactions:
        lines.append(
            f"- The API's summary against our own: with on-demand compaction (the defaults) agent-repl costs "
            f"{_k(ours.cost_units)} and keeps {ours.share('files_kept', 'files_total') or 0:.0%} of file paths; with "
            f"our nine-section summary {_k(own.cost_units)} ({own.cost_units / ours.cost_units - 1:+.0%}) and "
            f"{own.share('files_kept', 'files_total') or 0:.0%}. The emulator writes both summaries the same "
            "way (the summary condition's), so what they keep is alike here; what differs is what each request sends and writes."
        )
    return lines


def closing_note(results: Sequence[RunResult], strategies: Sequence[str], variants: Sequence[str] = ()) -> list[str]:
    lines: list[str] = []
    for window in sorted({r.window for r in results}):
        lines += [*_window_note(results, window, strategies, variants), ""]
    return lines
