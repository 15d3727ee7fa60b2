"""The real Claude Code as a row: the same scripted sessions through the `claude` CLI and agent-repl.

    .venv/bin/python -m benchmarks.claude_code_row            # writes benchmarks/claude_code_row.md

Each session (`benchmarks/ccrow/sessions.py`) is played by both agents at each window and summary
condition, against the emulator as the model; the report puts their cost, compactions, context
sizes, retention and overflows side by side. Without `claude` on PATH it says so and exits 0.
Options: `--sessions a,b`, `--windows 200000,100000`, `--conditions realistic,lossy`, `--out FILE`,
`--no-levers` (skip agent-repl's lever variants, `benchmarks/ccrow/levers.py`), `--report-only`
(rewrite the report from the runs saved beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from benchmarks.ccrow.conditions import CONDITIONS, SOURCE, summarizer_for
from benchmarks.ccrow.levers import DEFAULTS, LEVERS
from benchmarks.ccrow.report import load_results, render
from benchmarks.ccrow.runners import RowResult, claude_version, run_agent_repl, run_claude_code
from benchmarks.ccrow.sessions import PLANS, build_session, source_tree

HERE = Path(__file__).resolve().parent
WINDOWS = (200_000, 100_000)
COMMAND = ".venv/bin/python -m benchmarks.claude_code_row"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.claude_code_row", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--sessions", default=",".join(p.name for p in PLANS))
    parser.add_argument("--windows", default=",".join(str(w) for w in WINDOWS))
    parser.add_argument("--conditions", default=",".join(CONDITIONS))
    parser.add_argument("--out", type=Path, default=HERE / "claude_code_row.md")
    parser.add_argument("--no-levers", action="store_true", help="skip agent-repl's lever variants")
    parser.add_argument(
        "--report-only", action="store_true", help="rewrite the report from the runs saved beside it (.json)"
    )
    return parser


def _sources(conditions: list[str] | tuple[str, ...] = CONDITIONS) -> dict[str, str]:
    return {condition: SOURCE for condition in conditions}


def _report(result: RowResult) -> RowResult:
    print(
        f"{result.session} {result.window} {result.condition} {result.agent}: {result.cost_units / 1000:,.0f}K units, "
        f"{len(result.compactions)} compactions, {result.turns_done}/{result.turns} turns {result.note} "
        f"({result.wall_seconds:.0f}s)",
        flush=True,
    )
    return result


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    saved = args.out.with_suffix(".json")
    if args.report_only:
        head = args.out.read_text(encoding="utf-8").splitlines()[2] if args.out.is_file() else ""
        version = head.split("Claude Code ", 1)[-1].split(";", 1)[0] if "Claude Code " in head else "?"
        minutes = float(head.split("; ", 1)[-1].split(" min", 1)[0]) if " min" in head else 0.0
        text = render(
            load_results(saved), command=COMMAND, version=version, wall_minutes=minutes, sources=_sources()
        )
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
        return 0
    version = claude_version()
    if version is None:
        print(
            "claude_code_row: the `claude` CLI is not on PATH; nothing to compare (install @anthropic-ai/claude-code)."
        )
        return 0
    wanted = set(args.sessions.split(","))
    plans = [p for p in PLANS if p.name in wanted]
    windows = [int(w) for w in args.windows.split(",")]
    conditions = args.conditions.split(",")
    started = time.perf_counter()
    results: list[RowResult] = []
    for plan in plans:
        tree = source_tree(plan.package)
        session = build_session(plan, tree)
        for window in windows:
            for condition in conditions:
                summarizer = summarizer_for(condition)
                results.append(_report(run_claude_code(session, tree.parent, window, summarizer, condition)))
                # The levers run under the acceptance condition (the first) only.
                levers = [DEFAULTS] if args.no_levers or condition != conditions[0] else [DEFAULTS, *LEVERS]
                for lever in levers:
                    run = run_agent_repl(session, tree.parent, window, summarizer, condition, lever)
                    results.append(_report(asyncio.run(run)))
    minutes = (time.perf_counter() - started) / 60
    sources = _sources(conditions)
    args.out.write_text(
        render(results, command=COMMAND, version=version, wall_minutes=minutes, sources=sources),
        encoding="utf-8",
    )
    saved.write_text(json.dumps([asdict(r) for r in results], indent=1), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
