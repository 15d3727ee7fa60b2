"""BENCHMARKS.md and the plots, from the run results (nothing here runs a session)."""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.replay.metrics import RETAINED_KINDS, Aggregate, RunResult, new_tokens
from benchmarks.replay.trajectory import Trajectory

OURS = "agent-repl"
MEASURED = "measured"
REALISTIC = "realistic"
NO_PEER = "no peer finished every run, with or without overflows: nothing to compare with"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _k(value: float) -> str:
    return f"{value / 1000:,.0f}K"


def aggregates(
    results: Sequence[RunResult],
    window: int,
    strategies: Sequence[str],
    condition: str = MEASURED,
    summaries: str = REALISTIC,
) -> list[Aggregate]:
    chosen = [r for r in results if r.window == window and r.condition == condition and r.summaries == summaries]
    return [Aggregate(name, [r for r in chosen if r.strategy == name]) for name in strategies if any(r.strategy == name for r in chosen)]


def cheapest_clean(aggs: Sequence[Aggregate], *, peers_only: bool = False) -> Aggregate | None:
    """The cheapest strategy among those with no overflow error and no stopped run (of the peers
    only, with `peers_only`)."""
    clean = [a for a in aggs if a.runs and a.overflows == 0 and not a.stopped and not (peers_only and a.strategy == OURS)]
    return min(clean, key=lambda a: a.cost_units, default=None)


def cheapest_completed_peer(aggs: Sequence[Aggregate]) -> Aggregate | None:
    """The cheapest peer that finished every run, overflows recovered (when none ran clean)."""
    done = [a for a in aggs if a.runs and not a.stopped and a.strategy != OURS]
    return min(done, key=lambda a: a.cost_units, default=None)


def summary_table(aggs: Sequence[Aggregate]) -> list[str]:
    ours = next((a for a in aggs if a.strategy == OURS), None)
    rows = [
        "| strategy | cost units | $ at list price | vs agent-repl | compactions per run | kept above base "
        "| cache-read share (limit) | peak input | overflow errors "
        "| runs stopped | compactions | summary calls (+memory) | rewrites after a pause | thinking blocks dropped "
        "| est. error | pipeline CPU/request | user msgs kept | files kept |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for a in aggs:
        above = "n/a" if a.kept_above_base is None else f"{a.kept_above_base:,.0f}"
        relative = f"{a.cost_units / ours.cost_units - 1:+.0%}" if ours and ours.cost_units else "n/a"
        stopped = f"{len(a.stopped)}/{len(a.runs)}"
        calls = f"{int(a._sum('summary_calls'))} (+{int(a._sum('memory_calls'))})"
        partial = " *" if a.stopped else ""
        pauses = f"{int(a._sum('pause_rewrites'))}/{int(a._sum('pauses'))}"
        thinking = f"{int(a._sum('thinking_dropped'))}/{int(a._sum('thinking_written'))}"
        rows.append(
            f"| {a.strategy} | {_k(a.cost_units)}{partial} | {a.usd:,.2f} | {relative} "
            f"| {a.compactions_per_run:.1f} | {above} "
            f"| {a.cache_read_share:.3f} ({a.share_limit:.3f}) | {a.peak_input:,} | {a.overflows} | {stopped} "
            f"| {int(a._sum('compactions'))} | {calls} | {pauses} | {thinking} | {_pct(a.estimate_error)} "
            f"| {a.cpu_ms_per_request:.2f} ms | {_pct(a.share('users_kept', 'users_total'))} "
            f"| {_pct(a.share('files_kept', 'files_total'))} |"
        )
    return rows


def _after(a: Aggregate, kind: str) -> str:
    kept, total, lost = a.after_compaction(kind)
    if not total:
        return "n/a"
    return f"{_pct(kept / total)} ({lost} lost some)" if lost else _pct(kept / total)


def retention_table(aggs: Sequence[Aggregate]) -> list[str]:
    """What the view holds at the first request after each compaction, pooled over every
    compaction of every run; "(k lost some)": k compactions after which not all were there."""
    rows = [
        "| strategy | cost units | compactions | kept above base | user msgs | files | todo items | needles "
        "| needles at the question | user msgs at the end |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for a in aggs:
        asked = sum(r.needles_at_question[0] for r in a.runs), sum(r.needles_at_question[1] for r in a.runs)
        above = "n/a" if a.kept_above_base is None else f"{a.kept_above_base:,.0f}"
        partial = " *" if a.stopped else ""
        rows.append(
            f"| {a.strategy} | {_k(a.cost_units)}{partial} | {int(a._sum('compactions'))} | {above} | "
            + " | ".join(_after(a, kind) for kind in RETAINED_KINDS)
            + f" | {_pct(asked[0] / asked[1]) if asked[1] else 'n/a'} | {_pct(a.share('users_kept', 'users_total'))} |"
        )
    return rows


def per_trajectory_table(
    results: Sequence[RunResult], window: int, strategies: Sequence[str], names: Sequence[str], condition: str = MEASURED
) -> list[str]:
    rows = ["| trajectory | " + " | ".join(strategies) + " |", "|---|" + "---:|" * len(strategies)]
    # "stopped at k/n": request k could not be answered (refused as too long, or, with "reply cut",
    # answered with a reply the window cut short), so the rest of the script could not follow.
    for name in names:
        runs = {
            r.strategy: r
            for r in results
            if r.window == window and r.trajectory == name and r.strategy in strategies and r.condition == condition
        }
        if not runs:
            continue
        clean = [r for r in runs.values() if r.completed and r.overflow_errors == 0]
        best = min(clean, key=lambda r: r.cost_units, default=None)
        cells = []
        for strategy in strategies:
            r = runs.get(strategy)
            if r is None:
                cells.append("-")
                continue
            cell = _k(r.cost_units)
            if not r.completed:
                cut = " (reply cut)" if "cut" in r.stop_reason else ""
                cell = f"stopped at {r.stopped_at}/{r.steps}{cut}"
            elif r.overflow_errors:
                cell += f" ({r.overflow_errors} overflow)"
            cells.append(f"**{cell}**" if r is best else cell)
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


@dataclass(frozen=True)
class Check:
    what: str
    met: bool | None  # None: nothing to compare with (no peer finished every run)
    detail: str

    @property
    def verdict(self) -> str:
        return "N/A" if self.met is None else "MET" if self.met else "NOT MET"


def checks(aggs: Sequence[Aggregate]) -> list[Check]:
    """The issue's acceptance criteria for one window, from its aggregates."""
    ours = next((a for a in aggs if a.strategy == OURS), None)
    if ours is None or not ours.runs:
        return []
    peer = cheapest_clean(aggs, peers_only=True) or cheapest_completed_peer(aggs)
    best = cheapest_clean(aggs)
    overflowing = [r.trajectory for r in ours.runs if r.overflow_errors or not r.completed]
    users = ours.share("users_kept", "users_total") or 0.0
    files = ours.share("files_kept", "files_total") or 0.0
    clean_peers = [a for a in aggs if a.strategy != OURS and a.runs and a.overflows == 0 and not a.stopped]
    # With no peer clean, the peers that finished every run are the comparison.
    compared = clean_peers or [a for a in aggs if a.strategy != OURS and a.runs and not a.stopped]
    peer_files = max(((a.share("files_kept", "files_total") or 0.0, a.strategy) for a in compared), default=None)
    ratio = ours.cost_units / peer.cost_units if peer is not None and peer.cost_units else None
    limit = ours.share_limit
    return [
        Check("zero overflows on every trajectory", not overflowing, ", ".join(overflowing) or "none"),
        Check("user messages kept = 100%", users >= 1.0, _pct(users)),
        Check(
            "files kept >= the best peer's without overflows",
            None if peer_files is None else files >= peer_files[0],
            f"{_pct(files)} against {peer_files[1]}'s {_pct(peer_files[0])}" if peer_files else f"{_pct(files)}; {NO_PEER}",
        ),
        Check(
            "lowest cost of the strategies without overflows",
            best is not None and best.strategy == OURS,
            f"cheapest: {best.strategy} ({_k(best.cost_units)} against agent-repl's {_k(ours.cost_units)})" if best else "none ran clean",
        ),
        Check(
            "cost <= 0.85x the cheapest peer without overflows",
            None if ratio is None else ratio <= 0.85,
            f"{ratio:.2f}x {peer.strategy}{'' if peer.overflows == 0 else ' (no peer ran without overflows: the cheapest that finished every run)'}"
            if ratio is not None and peer is not None
            else NO_PEER,
        ),
        Check(
            "cache-read share >= 0.90, or the limit of these prompts",
            ours.cache_read_share >= 0.90 or ours.cache_read_share >= limit - 0.005,
            f"{ours.cache_read_share:.3f}; limit 1 - new tokens / input = {limit:.3f}",
        ),
    ]


def retention_after_checks(aggs: Sequence[Aggregate]) -> list[Check]:
    """agent-repl under lossy summaries: every user message and todo item in the view after every compaction."""
    ours = next((a for a in aggs if a.strategy == OURS), None)
    if ours is None or not ours.runs:
        return []
    found = []
    for kind, what in (("users", "user messages"), ("todos", "todo items")):
        kept, total, lost = ours.after_compaction(kind)
        detail = f"{kept}/{total} over {len(ours.runs)} runs, {lost} compactions lost some" if total else "none to keep"
        found.append(Check(f"agent-repl keeps 100% of {what} after every compaction", None if not total else lost == 0, detail))
    return found


def acceptance(aggs: Sequence[Aggregate], window: int) -> list[str]:
    found = checks(aggs)
    if not found:
        return []
    lines = [f"Acceptance, {window // 1000}K window, public path, measured gaps:", ""]
    return lines + [f"- {c.verdict}: {c.what} ({c.detail})" for c in found]


def write_csv(results: Sequence[RunResult], path: Path) -> None:
    """One row per run: what the tables aggregate, per trajectory."""
    columns = [
        "condition", "summaries", "window", "trajectory", "strategy", "completed", "stopped_at", "overflow_errors",
        "main_requests", "cost_units", "usd", "cache_read_share", "share_limit", "peak_input", "compactions",
        "summary_calls", "memory_calls", "pauses", "pause_rewrites", "prefix_rewrites", "thinking_written",
        "thinking_dropped", "users_kept", "users_total", "files_kept", "files_total", "cpu_ms_per_request",
        "kept_above_base", *(f"{kind}_after_compaction" for kind in RETAINED_KINDS), "needles_at_question",
        "sim_minutes", "wall_seconds",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for r in results:
            total = sum(r.input_series)
            limit = 1 - new_tokens(r.input_series) / total if total else 0.0
            values = {**dataclasses.asdict(r), "completed": r.completed, "share_limit": round(limit, 4)}
            values["cpu_ms_per_request"] = round(r.cpu_ms_per_request, 3)
            values["cost_units"], values["usd"] = round(r.cost_units), round(r.usd, 4)
            values["cache_read_share"] = round(r.cache_read_share, 4)
            values["sim_minutes"], values["wall_seconds"] = round(r.sim_minutes, 1), round(r.wall_seconds, 1)
            above = [p["above_base"] for p in r.after_compaction]
            values["kept_above_base"] = round(sum(above) / len(above)) if above else ""
            for kind in RETAINED_KINDS:
                kept, total = (sum(p[kind][i] for p in r.after_compaction) for i in (0, 1))
                values[f"{kind}_after_compaction"] = f"{kept}/{total}" if total else ""
            values["needles_at_question"] = "{}/{}".format(*r.needles_at_question) if r.needles_at_question[1] else ""
            writer.writerow([values[c] for c in columns])


def diagnostics(aggs: Sequence[Aggregate]) -> list[str]:
    rows = [
        "| strategy | prefix rewrites | auto snips | cache edits | content replacements | time-based clears |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for a in aggs:
        def count(kind: str, runs: list[RunResult] = a.runs) -> int:
            return sum(r.records.get(kind, 0) for r in runs)

        rows.append(
            f"| {a.strategy} | {int(a._sum('prefix_rewrites'))} | {count('snip')} | {count('cache-edit')} "
            f"| {count('content-replacement')} | {count('microcompact-clear')} |"
        )
    return rows


def trajectory_table(trajectories: Sequence[Trajectory]) -> list[str]:
    rows = ["| trajectory | model replies | user turns | typed messages | files touched | source |", "|---|---:|---:|---:|---:|---|"]
    for t in trajectories:
        rows.append(
            f"| {t.name} | {t.request_count} | {len(t.turns)} | {len(t.typed_user_messages())} "
            f"| {len(t.touched_files())} | {t.source} |"
        )
    return rows


def plot(results: Sequence[RunResult], window: int, strategies: Sequence[str], names: Sequence[str], path: Path) -> None:
    results = [r for r in results if r.condition == MEASURED]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = 3
    rows = (len(names) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(6 * columns, 3.6 * rows), squeeze=False)
    for index, name in enumerate(names):
        axis = axes[index // columns][index % columns]
        for strategy in strategies:
            run = next((r for r in results if r.window == window and r.trajectory == name and r.strategy == strategy), None)
            if run is None or not run.input_series:
                continue
            xs = range(1, len(run.input_series) + 1)
            (line,) = axis.plot(xs, [v / 1000 for v in run.input_series], label=strategy, linewidth=1.2)
            if not run.completed:
                axis.plot([len(run.input_series)], [run.input_series[-1] / 1000], "x", color=line.get_color(), markersize=9)
        axis.axhline(window / 1000, color="grey", linestyle=":", linewidth=1)
        axis.set_title(name, fontsize=10)
        axis.set_xlabel("request")
        axis.set_ylabel("input tokens (K)")
    for index in range(len(names), rows * columns):
        axes[index // columns][index % columns].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.suptitle(f"Input tokens per main request, {window // 1000}K window (x: the run stopped)", y=0.995)
    figure.legend(handles, labels, loc="upper center", ncol=len(strategies), frameon=False, bbox_to_anchor=(0.5, 0.975))
    figure.tight_layout(rect=(0, 0, 1, 0.95))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=90)
    plt.close(figure)
