"""Regenerate BENCHMARKS.md, its plots and results/runs.csv (one row per run): every strategy on
every trajectory at 50K, 200K and 1M on the public API, with the measured gaps and, labelled, with pauses.

    .venv/bin/python -m benchmarks.replay.run            # everything (records our explorations if needed)
    .venv/bin/python -m benchmarks.replay.run --fresh    # record the explorations again first
    .venv/bin/python -m benchmarks.replay.run --report-only   # rewrite the report from results.json

Prints one line per run and the wall time at the end; the wall time is also written into the report.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import multiprocessing
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from datetime import date
from pathlib import Path

from benchmarks.pipeline_scale import measure as measure_pipeline
from benchmarks.replay.calibrate_summaries import SummarySizes
from benchmarks.replay.catalogue import RECORDINGS, REPO, SHARED_DATA, load_all
from benchmarks.replay.harness import DEFAULT_READ_MULTIPLIER, run_one
from benchmarks.replay.metrics import RunResult
from benchmarks.replay.needles import plant_needles
from benchmarks.replay.notes import closing_note
from benchmarks.replay.report import (
    MEASURED,
    OURS,
    REALISTIC,
    acceptance,
    aggregates,
    diagnostics,
    per_trajectory_table,
    plot,
    retention_after_checks,
    retention_table,
    summary_table,
    trajectory_table,
    write_csv,
)
from benchmarks.replay.strategies import DIAGNOSTIC_VARIANTS, STRATEGIES
from benchmarks.replay.summarizers import CONDITIONS as SUMMARY_CONDITIONS
from benchmarks.replay.summarizers import DEFAULT_CONDITION
from benchmarks.replay.timeline import GapSamples, Pauses
from benchmarks.replay.trajectory import Trajectory

RESULTS = Path(__file__).resolve().parent / "results"
# What changed since the run before, in words, from whoever changed it (figures of both runs).
CHANGES = Path(__file__).resolve().parent / "CHANGES.md"


def _changes() -> list[str]:
    if not CHANGES.is_file():
        return []
    return ["## What changed since the previous run", "", *CHANGES.read_text(encoding="utf-8").strip().splitlines(), ""]


WINDOWS = (50_000, 200_000, 1_000_000)
PAUSES_CONDITION = "pauses"
CONDITIONS = (MEASURED, PAUSES_CONDITION)
# The labelled condition beside the measured gaps (which have no pause past 5 minutes): a quarter
# of the turns come after a pause, some past the 5-minute cache lifetime, one past the hour.
PAUSES = Pauses(share=0.25, minutes=(10, 20, 45, 90))
# The summary conditions beside the realistic one run the strategies (not the levers), measured gaps,
# at these windows by default (`--other-summary-windows`).
OTHER_SUMMARY_WINDOWS = (200_000,)
Task = tuple[str, int, str, str, str]  # time condition, window, trajectory, strategy, summaries


def _print(result: RunResult) -> None:
    stopped = f" STOPPED at {result.stopped_at}/{result.steps}" if not result.completed else ""
    print(
        f"{result.condition[:5]} {result.summaries[:5]} {result.window // 1000:>4}K {result.trajectory:<20} {result.strategy:<15} "
        f"{result.cost_units / 1000:>9,.0f}K units "
        f"share {result.cache_read_share:.3f} peak {result.peak_input:>7,} overflows {result.overflow_errors}"
        f"{stopped} ({result.wall_seconds:.1f}s)",
        flush=True,
    )


_WORKER_TRAJECTORIES: dict[str, Trajectory] = {}
_WORKER_READ_MULTIPLIER: list[float] = [DEFAULT_READ_MULTIPLIER]


def _worker_start(shared_data: Path, read_multiplier: float, only: list[str]) -> None:
    loaded = load_all(shared_data=shared_data, recordings=RECORDINGS, only=only)
    _WORKER_TRAJECTORIES.update({t.name: plant_needles(t) for t in loaded})
    _WORKER_READ_MULTIPLIER[0] = read_multiplier


def _worker_run(task: Task) -> RunResult:
    condition, window, name, strategy, summaries = task
    chosen = next(s for s in [*STRATEGIES, *DIAGNOSTIC_VARIANTS] if s.name == strategy)
    pauses = PAUSES if condition == "pauses" else None
    return asyncio.run(
        run_one(
            _WORKER_TRAJECTORIES[name],
            chosen,
            window,
            pauses=pauses,
            read_multiplier=_WORKER_READ_MULTIPLIER[0],
            summaries=summaries,
        )
    )


def plan(
    trajectories: list[Trajectory],
    strategies: list[str],
    windows: tuple[int, ...],
    conditions: tuple[str, ...],
    summaries: tuple[str, ...] = (DEFAULT_CONDITION,),
    other_summary_windows: tuple[int, ...] = OTHER_SUMMARY_WINDOWS,
) -> list[Task]:
    """Every run, in the report's order: each strategy where it runs (`Strategy.runs_in`); under
    pauses only the trajectories with more than one turn (a single turn has no gap to lengthen).
    The realistic summaries are the acceptance condition: everything runs under them; the other
    summary conditions run the strategies (not the levers) with the measured gaps, at
    `other_summary_windows`."""
    chosen = {s.name: s for s in [*STRATEGIES, *DIAGNOSTIC_VARIANTS] if s.name in strategies}
    main = {s.name for s in STRATEGIES}
    return [
        (c, w, t.name, name, kind)
        for kind in summaries
        for c in conditions
        for w in windows
        if kind == DEFAULT_CONDITION or (c == MEASURED and w in other_summary_windows)
        for t in trajectories
        if c == MEASURED or len(t.turns) > 1
        for name in strategies
        if chosen[name].runs_in(c, w) and (kind == DEFAULT_CONDITION or name in main)
    ]


def run_all(
    trajectories: list[Trajectory],
    strategies: list[str],
    windows: tuple[int, ...],
    *,
    jobs: int,
    shared_data: Path,
    conditions: tuple[str, ...] = CONDITIONS,
    read_multiplier: float = DEFAULT_READ_MULTIPLIER,
    summaries: tuple[str, ...] = (DEFAULT_CONDITION,),
    other_summary_windows: tuple[int, ...] = OTHER_SUMMARY_WINDOWS,
) -> list[RunResult]:
    """Every run; with `jobs` > 1 in that many worker processes, each with its own emulator,
    longest runs first. Results come back in the table's order."""
    tasks = plan(trajectories, strategies, windows, conditions, summaries, other_summary_windows)
    if jobs <= 1:
        _WORKER_TRAJECTORIES.update({t.name: t for t in trajectories})
        _WORKER_READ_MULTIPLIER[0] = read_multiplier
        results = []
        for task in tasks:
            results.append(_worker_run(task))
            _print(results[-1])
        return results
    steps = {t.name: t.request_count for t in trajectories}
    ordered = sorted(tasks, key=lambda task: -steps[task[2]] * task[1])
    done: dict[Task, RunResult] = {}
    context = multiprocessing.get_context("spawn")
    initargs = (shared_data, read_multiplier, [t.name for t in trajectories])
    with ProcessPoolExecutor(jobs, mp_context=context, initializer=_worker_start, initargs=initargs) as pool:
        futures = {pool.submit(_worker_run, task): task for task in ordered}
        for future in as_completed(futures):
            done[futures[future]] = future.result()
            _print(done[futures[future]])
    return [done[task] for task in tasks]


def _header(wall_seconds: float, runs: int, load: str, pauses: Pauses, csv_link: str) -> list[str]:
    gaps = GapSamples.load()
    return [
        "# Long-session benchmark: replayed agent trajectories on the public API",
        "",
        "Generated by the one command below; do not edit by hand. How the replay works, the strategies and "
        "the sources of their parameters: [benchmarks/replay/README.md](benchmarks/replay/README.md). "
        f"Every run's figures, per trajectory: [{csv_link}]({csv_link}).",
        "",
        "    .venv/bin/python -m benchmarks.replay.run",
        "",
        f"Last run: {date.today().isoformat()}, wall time **{wall_seconds / 60:.1f} min** ({wall_seconds:.0f} s) "
        f"on this machine ({platform.machine()}, Python {platform.python_version()}; 2 cores shared with other "
        f"work: load average {load}), {runs} runs.",
        "",
        "The emulator plays the public Messages API (no cache editing) for every strategy; the one variant on "
        "the emulator's cache-editing beta is marked (not public). The model is `claude-sonnet-5-5` (input $2/MTok, "
        "output $10/MTok, cache read 0.1x, 5-minute cache write 1.25x, 1-hour write 2x). **Cost units** are "
        "input-token equivalents at those multipliers: uncached + 1.25 x 5m write + 2 x 1h write + 0.1 x read + "
        "5 x output, over every request a strategy made (summaries and session-memory notes included); **$** is "
        "the same at list price. A `*` marks a total that includes runs which stopped early (so it is not "
        "comparable). **Cache-read share (limit)**: reads / all input, and in brackets the best share these main "
        "prompts allow, 1 - new tokens / input, where new tokens are what each main request added beyond the "
        "previous one's prompt. **Peak input** is the largest prompt of any request. **Rewrites after a pause**: "
        "main requests that came more than 5 minutes after the previous request and wrote more than half of their "
        "prompt to the cache, of all such requests. **Thinking blocks dropped**: thinking blocks the model wrote "
        "that a later main request sent their reply without, of all it wrote. **Est. error** is the mean "
        "|estimate - actual| / actual of the pipeline's token count before each main request. **Pipeline CPU** is "
        "the thread CPU time of the loop's projection per main request. **User msgs kept**: typed user messages "
        "found verbatim (CRLF = LF) in the last request of the run, in its messages or in a summary; **files "
        "kept**: paths the tool calls named that are still in it. **Compactions per run** and **kept above base** (the "
        "mean input tokens of the first request after each compaction above the run's first request, the system "
        "prompt, tools and opening prompt) say how often a strategy compacts and how much it keeps. **Summaries** "
        "are **realistic** in every table but the retention section: the emulator's summary (ours, the peers', the "
        "API's on-demand compaction, session-memory notes) holds its extractive content (every user message quoted, "
        "the paths of Read-style calls listed) padded with a work log drawn from the conversation to the size of a "
        f"real Claude Code summary ({SummarySizes.load().describe()}; `benchmarks/replay/summary_sizes.json`, "
        "regenerated by `python -m benchmarks.replay.calibrate_summaries`), so every summary is billed at a real "
        "summary's output. Being extractive, they still "
        "quote every user message, so summarizing strategies keep user messages by construction in these tables; "
        "what each keeps when the summary quotes nothing is in the retention section (lossy summaries). The paths of the other calls (searches, "
        "commands) stay in agent-repl's view through its own list after a compaction, which does not depend on the "
        "summary (context/touched_files.py). Replayed replies are the recorded ones "
        "whatever the context holds, so these numbers measure cost and what stays in view, not whether the work "
        "would still succeed.",
        "",
        "**Time.** Nothing sleeps: one simulated clock moves by the user's think time before each turn, by the "
        "model's latency at each reply and by each step's tool time, and the emulator's cache expires on it "
        "(5 minutes, or an hour for 1-hour breakpoints). Recorded times are used where a trajectory has them "
        "(Claude Code and mini-swe-agent timestamps, SWE-agent execution times, our explorations' measured tool "
        "durations); the rest are drawn, with a generator seeded by the trajectory's name, from the gaps of the "
        f"real Claude Code sessions in `../shared/data/claude_code/` ({gaps.describe()}; "
        "`benchmarks/replay/gaps.json`, regenerated by `python -m benchmarks.replay.timeline`). Those sessions "
        "have no pause past 5 minutes, so the **measured gaps** condition never lets the cache expire between "
        f"turns. The labelled **pauses** condition replaces each between-turn gap, with a seeded draw, by a "
        f"pause ({pauses.label}) on the trajectories with more than one turn: it is our assumption, not data, "
        "and shows what a pause costs and which levers pay for it.",
        "",
    ]


def _window_section(
    results: list[RunResult], window: int, strategies: list[str], variants: list[str], names: list[str], image: str
) -> list[str]:
    aggs = aggregates(results, window, strategies)
    lines = [
        f"## {window // 1000}K window",
        "",
        "Measured gaps:",
        "",
        *summary_table(aggs),
        "",
        "Cost units per trajectory (bold: the cheapest run with no overflow; \"stopped at k/n\": request k "
        "was refused as too long, or with \"reply cut\" its reply was cut at the window's edge, and the run "
        "could not go on):",
        "",
        *per_trajectory_table(results, window, strategies, names),
        "",
        *acceptance(aggs, window),
        "",
        "Prefix rewrites are main requests that wrote more than half of their prompt (and at least 20K tokens) "
        "to the cache again; the other columns count the pipeline's own side records.",
        "",
        *diagnostics(aggs),
        "",
        "What the view held at the first request after each compaction (realistic summaries; pooled over every "
        "compaction of every run, \"(k lost some)\": after k compactions not all were there):",
        "",
        *retention_table(aggs),
        "",
        f"![input tokens per request, {window // 1000}K window]({image})",
        "",
    ]
    levers = aggregates(results, window, [OURS, *variants])
    if len(levers) > 1:
        lines += [
            f"Levers at {window // 1000}K, each alone against the defaults, measured gaps (not product settings "
            "unless the defaults say so; (not public) uses the emulator's cache-editing beta):",
            "",
            *summary_table(levers),
            "",
        ]
    paused = aggregates(results, window, [*strategies, *variants], PAUSES_CONDITION)
    if paused:
        lines += [
            f"Pauses condition at {window // 1000}K (the multi-turn trajectories only; the peers and the levers "
            "about time):",
            "",
            *summary_table(paused),
            "",
        ]
    return lines


def _summaries_section(results: list[RunResult], strategies: list[str]) -> list[str]:
    """The summary conditions beside the realistic one: what each strategy keeps after each compaction."""
    lines: list[str] = []
    for kind in ("lossy", "extractive"):
        for window in sorted({r.window for r in results if r.summaries == kind}):
            aggs = aggregates(results, window, strategies, MEASURED, kind)
            if not aggs:
                continue
            lines += [f"### {kind.capitalize()} summaries, {window // 1000}K window", "", *retention_table(aggs), ""]
            if kind == "lossy":
                found = retention_after_checks(aggs)
                lines += [f"- {c.verdict}: {c.what} ({c.detail})" for c in found] + [""]
    if not lines:
        return []
    return [
        "## Retention when the summary keeps nothing verbatim",
        "",
        "Under **lossy** summaries the emulator's summary (ours, the peers', the API's on-demand compaction and "
        "session-memory notes alike) is as long as a realistic one but quotes nothing: no user message, no path, "
        "no todo item, no planted fact. What a strategy still shows after a compaction it keeps by itself. Each "
        "trajectory states three facts (needles) in its first user turns and asks for them in a last turn; "
        "**needles at the question** is the share the request carrying that question held. **Extractive** "
        "summaries (the emulator's earlier default, quoting every user message) are there for comparison when run.",
        "",
        *lines,
    ]


def _scale_section(rows: list[dict[str, float]]) -> list[str]:
    """benchmarks/pipeline_scale.py's rows, measured by this command after the replays."""
    if not rows:
        return []
    wide = rows[-1]
    verdict = "MET" if wide["cpu_ms_per_turn"] <= 20 else "NOT MET"
    return [
        "## Pipeline CPU per request at a 1M-token view",
        "",
        "The projection alone (the default stages on the public API, normalization, the thinking chain), "
        "measured by this command after the replays with `benchmarks/pipeline_scale.py`'s histories, side by "
        "side, 30 turns each (median thread CPU time per turn):",
        "",
        "| history (messages) | history MB | view tokens | CPU ms per request | wall ms per request |",
        "|---:|---:|---:|---:|---:|",
        *[
            f"| {r['messages']:,.0f} | {r['history_mb']:.1f} | {r['view_tokens']:,.0f} | {r['cpu_ms_per_turn']:.2f} "
            f"| {r['ms_per_turn']:.2f} |"
            for r in rows
        ],
        "",
        f"- {verdict}: CPU per request <= 20 ms at a {wide['view_tokens']:,.0f}-token view ({wide['cpu_ms_per_turn']:.2f} ms).",
        "",
    ]


def write_report(
    results: list[RunResult],
    trajectories: list[Trajectory],
    strategies: list[str],
    variants: list[str],
    wall_seconds: float,
    path: Path,
    results_dir: Path = RESULTS,
    load: str = "not measured",
    scale: list[dict[str, float]] | None = None,
) -> None:
    names = [t.name for t in trajectories]
    others = [r for r in results if r.summaries != REALISTIC]
    results = [r for r in results if r.summaries == REALISTIC]
    lines = [
        *_header(wall_seconds, len(results), load, PAUSES, _relative(results_dir / "runs.csv", path.parent)),
        *_changes(),
        "## Trajectories",
        "",
        *trajectory_table(trajectories),
        "",
    ]
    for window in sorted({r.window for r in results}):
        image = _relative(results_dir / f"input_tokens_{window // 1000}k.png", path.parent)
        lines += _window_section(results, window, strategies, variants, names, image)
    lines += _summaries_section(others, strategies)
    lines += _scale_section(scale or [])
    lines += ["## Closing note", "", *closing_note(results, strategies, variants), ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def _relative(path: Path, start: Path) -> str:
    return os.path.relpath(path.resolve(), start.resolve())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fresh", action="store_true", help="record our own explorations again")
    parser.add_argument("--report-only", action="store_true", help="rewrite BENCHMARKS.md from results.json")
    parser.add_argument("--shared-data", type=Path, default=SHARED_DATA)
    parser.add_argument("--strategies", default=",".join(s.name for s in STRATEGIES))
    parser.add_argument("--windows", default=",".join(str(w) for w in WINDOWS))
    parser.add_argument("--conditions", default=",".join(CONDITIONS), help="measured gaps, and/or the pauses condition")
    parser.add_argument(
        "--summaries",
        default="realistic,lossy",
        help=f"who writes the summaries, of {', '.join(SUMMARY_CONDITIONS)} (realistic: the acceptance condition)",
    )
    parser.add_argument(
        "--other-summary-windows",
        default=",".join(str(w) for w in OTHER_SUMMARY_WINDOWS),
        help="the windows the summary conditions other than realistic run at",
    )
    parser.add_argument(
        "--cache-read-multiplier",
        type=float,
        default=DEFAULT_READ_MULTIPLIER,
        help="Sonnet 5.5's cache-read price relative to input (the reference: 0.1 or 0.05)",
    )
    parser.add_argument("--only", default="", help="comma-separated trajectory names (default: all)")
    parser.add_argument("--no-variants", action="store_true", help="skip the diagnostic variants of agent-repl")
    parser.add_argument("--out", type=Path, default=REPO / "BENCHMARKS.md")
    parser.add_argument("--results-dir", type=Path, default=RESULTS, help="where results.json and the plots go")
    # A run waits on its local HTTP round trips about half the time, so two per core keep the cores busy.
    parser.add_argument("--jobs", type=int, default=min(4, 2 * (os.cpu_count() or 1)), help="worker processes (default 4)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    strategies = args.strategies.split(",")
    variants = [] if args.no_variants else [v.name for v in DIAGNOSTIC_VARIANTS]
    summaries = tuple(args.summaries.split(","))
    unknown = [s for s in summaries if s not in SUMMARY_CONDITIONS]
    if unknown:
        parser.error(f"--summaries: unknown {', '.join(unknown)}; one of {', '.join(SUMMARY_CONDITIONS)}")
    only = args.only.split(",") if args.only else None
    trajectories = load_all(shared_data=args.shared_data, recordings=RECORDINGS, fresh=args.fresh, only=only)
    # Every trajectory states a few facts early and asks for them at the end (needles.py).
    trajectories = [plant_needles(t) for t in trajectories]
    results_dir: Path = args.results_dir
    saved = results_dir / "results.json"
    if args.report_only:
        data = json.loads(saved.read_text(encoding="utf-8"))
        # Results written before the summary conditions existed were all extractive.
        results = [RunResult(**{"summaries": "extractive", **r}) for r in data["runs"]]
        wall = float(data["wall_seconds"])
        load = str(data.get("load", "not measured"))
        scale = list(data.get("pipeline_scale", []))
        variants = [v for v in variants if any(r.strategy == v for r in results)]
    else:
        if not (args.shared_data / "trajectories").is_dir():
            print(f"note: {args.shared_data} not found; only our own explorations are replayed", file=sys.stderr)
        windows = tuple(int(w) for w in args.windows.split(","))
        conditions = tuple(args.conditions.split(","))
        results = run_all(
            trajectories,
            [*strategies, *variants],
            windows,
            jobs=args.jobs,
            shared_data=args.shared_data,
            conditions=conditions,
            read_multiplier=args.cache_read_multiplier,
            summaries=summaries,
            other_summary_windows=tuple(int(w) for w in args.other_summary_windows.split(",")),
        )
    realistic = [r for r in results if r.summaries == REALISTIC]
    for window in sorted({r.window for r in realistic}):
        plot(realistic, window, strategies, [t.name for t in trajectories], results_dir / f"input_tokens_{window // 1000}k.png")
    if not args.report_only:
        scale = measure_pipeline()
        wall = time.perf_counter() - started
        # The 1-minute load average when the run started and when it ended (other work shares the cores).
        load = f"{load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
        results_dir.mkdir(parents=True, exist_ok=True)
        saved.write_text(
            json.dumps(
                {"wall_seconds": wall, "load": load, "pipeline_scale": scale, "runs": [dataclasses.asdict(r) for r in results]}
            ),
            encoding="utf-8",
        )
    write_csv(results, results_dir / "runs.csv")
    write_report(results, trajectories, strategies, variants, wall, args.out, results_dir, load, scale)
    total = time.perf_counter() - started
    print(f"wrote {args.out} and {results_dir}; wall time {total / 60:.1f} min ({total:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
