"""BENCHMARKS.md and the plots, from the run results (nothing here runs a session)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benchmarks.replay.metrics import Aggregate, RunResult
from benchmarks.replay.trajectory import Trajectory

OURS = "agent-repl"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _k(value: float) -> str:
    return f"{value / 1000:,.0f}K"


def aggregates(results: Sequence[RunResult], window: int, strategies: Sequence[str]) -> list[Aggregate]:
    return [Aggregate(name, [r for r in results if r.window == window and r.strategy == name]) for name in strategies]


def cheapest_clean(aggs: Sequence[Aggregate]) -> Aggregate | None:
    """The cheapest strategy among those with no overflow error and no stopped run."""
    clean = [a for a in aggs if a.runs and a.overflows == 0 and not a.stopped]
    return min(clean, key=lambda a: a.cost_units, default=None)


def summary_table(aggs: Sequence[Aggregate]) -> list[str]:
    ours = next((a for a in aggs if a.strategy == OURS), None)
    rows = [
        "| strategy | cost units | vs agent-repl | cache-read share | peak input | overflow errors | runs stopped "
        "| compactions | summary calls (+memory) | est. error | pipeline CPU/request | user msgs kept | files kept |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for a in aggs:
        relative = f"{a.cost_units / ours.cost_units - 1:+.0%}" if ours and ours.cost_units else "n/a"
        stopped = f"{len(a.stopped)}/{len(a.runs)}"
        calls = f"{int(a._sum('summary_calls'))} (+{int(a._sum('memory_calls'))})"
        partial = " *" if a.stopped else ""
        rows.append(
            f"| {a.strategy} | {_k(a.cost_units)}{partial} | {relative} | {a.cache_read_share:.3f} | {a.peak_input:,} "
            f"| {a.overflows} | {stopped} | {int(a._sum('compactions'))} | {calls} | {_pct(a.estimate_error)} "
            f"| {a.cpu_ms_per_request:.2f} ms | {_pct(a.share('users_kept', 'users_total'))} "
            f"| {_pct(a.share('files_kept', 'files_total'))} |"
        )
    return rows


def per_trajectory_table(results: Sequence[RunResult], window: int, strategies: Sequence[str], names: Sequence[str]) -> list[str]:
    rows = ["| trajectory | " + " | ".join(strategies) + " |", "|---|" + "---:|" * len(strategies)]
    # "stopped at k/n": request k could not be answered (refused as too long, or, with "reply cut",
    # answered with a reply the window cut short), so the rest of the script could not follow.
    for name in names:
        runs = {r.strategy: r for r in results if r.window == window and r.trajectory == name and r.strategy in strategies}
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


def acceptance(aggs: Sequence[Aggregate], window: int) -> list[str]:
    ours = next((a for a in aggs if a.strategy == OURS), None)
    if ours is None or not ours.runs:
        return []
    best = cheapest_clean(aggs)
    overflowing = [r.trajectory for r in ours.runs if r.overflow_errors or not r.completed]
    users = ours.share("users_kept", "users_total")
    checks = [
        ("zero overflows on every trajectory", not overflowing, f"overflows on: {', '.join(overflowing)}" if overflowing else "none"),
        (
            "lowest cost units of the strategies without overflows",
            best is not None and best.strategy == OURS,
            f"cheapest without overflows: {best.strategy} ({_k(best.cost_units)} vs {_k(ours.cost_units)})" if best else "none ran clean",
        ),
        ("cache-read share >= 0.90", ours.cache_read_share >= 0.90, f"{ours.cache_read_share:.3f}"),
        ("user messages retained = 100%", users is not None and users >= 1.0, _pct(users)),
    ]
    lines = [f"Acceptance, {window // 1000}K window:", ""]
    lines += [f"- {'MET' if ok else 'NOT MET'}: {what} ({detail})" for what, ok, detail in checks]
    return lines


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
