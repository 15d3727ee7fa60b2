"""Memory of a long live session: RSS after turn 100 and after turn 1,000 of one session.

    .venv/bin/python benchmarks/memory_growth.py [--turns 1000] [--check 100] [--every 100] [--trace]

The full-screen app runs headless (Textual's Pilot) on the real query loop, against the offline
demo model served by the emulator in a separate process, so the figures are the agent's own. Each
turn is a prompt submitted as if typed, answered by a streamed reply, written to the transcript.
RSS is the process's resident set when a turn has ended and its screen is drawn (/proc/self/statm).
`--trace` takes tracemalloc snapshots at the check turn and at the end and prints the source lines
whose live allocations grew most between them (about three times slower).
Goal (issue 30): RSS after turn 1,000 within 10% of RSS after turn 100.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAGE_MB = os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE_MB


def start_emulator() -> tuple[subprocess.Popen[str], str]:
    """The offline demo model in its own process; returns it and its base URL."""
    child = subprocess.Popen(
        [sys.executable, "-m", "agent_repl.offline", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert child.stdout is not None
    first = child.stdout.readline().strip()
    if not first.startswith("listening on "):
        child.kill()
        raise RuntimeError(f"the emulator did not start: {first!r}")
    return child, first.removeprefix("listening on ")


def prompt_for(turn: int) -> str:
    return f"Turn {turn}: in two sentences, what is the difference between a list and a tuple?"


async def run_session(base_url: str, turns: int, check: int, every: int, trace: bool) -> dict[int, float]:
    from agent_repl.core.config.settings import Settings
    from agent_repl.ui.app import AgentApp
    from agent_repl.ui.launcher import Launcher
    from agent_repl.ui.widgets.prompt_input import PromptInput

    figures: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "project"
        cwd.mkdir()
        settings = Settings(home=home, api_key="sk-ant-bench", base_url=base_url)
        app = AgentApp(Launcher.for_settings(settings, cwd), animate=False, warm_client=False)
        finished: list[str] = []
        ready: list[bool] = []

        def hook(message: object) -> None:
            name = type(message).__name__
            if name == "TurnFinished":
                finished.append(getattr(message, "reason", ""))
            elif name == "SessionReady":
                ready.append(True)

        async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
            await until(pilot, lambda: bool(ready))
            first_snapshot = None
            started = time.perf_counter()
            for turn in range(1, turns + 1):
                app.post_message(PromptInput.Submitted(prompt_for(turn)))
                await until(pilot, lambda t=turn: len(finished) >= t)
                await pilot.pause()
                if turn == check or turn % every == 0 or turn == turns:
                    figures[turn] = rss_mb()
                    print(
                        f"turn {turn:>5}: RSS {figures[turn]:7.1f} MB   "
                        f"({len(app.session.messages):,} history entries, "
                        f"{len(app.conversation.children)} conversation widgets, "
                        f"{time.perf_counter() - started:.0f} s)",
                        flush=True,
                    )
                if trace and turn == check:
                    tracemalloc.start(8)
                    first_snapshot = tracemalloc.take_snapshot()
            if trace and first_snapshot is not None:
                show_growth(first_snapshot, tracemalloc.take_snapshot())
            failed = [reason for reason in finished if reason != "completed"]
            if failed:
                print(f"{len(failed)} turns did not complete: {sorted(set(failed))}")
    return figures


def show_growth(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, top: int = 15) -> None:
    print(f"\nlive allocations that grew most since the check turn (tracemalloc, top {top}):")
    for stat in after.compare_to(before, "traceback")[:top]:
        frame = stat.traceback[0]
        print(f"  {stat.size_diff / 1024:+9.0f} KiB {stat.count_diff:+8,} blocks  {frame.filename}:{frame.lineno}")
        for other in stat.traceback[1:4]:
            print(f"  {'':>36}  via {other.filename}:{other.lineno}")


async def until(pilot, condition, limit_s: float = 300.0) -> None:
    deadline = time.perf_counter() + limit_s
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("condition not met")
        await pilot.pause(0.005)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1_000)
    parser.add_argument("--check", type=int, default=100, help="the turn the last one is compared with")
    parser.add_argument("--every", type=int, default=100, help="print RSS every this many turns")
    parser.add_argument("--trace", action="store_true", help="tracemalloc: what grew between the two")
    args = parser.parse_args()
    emulator, base_url = start_emulator()
    try:
        figures = asyncio.run(run_session(base_url, args.turns, args.check, args.every, args.trace))
    finally:
        emulator.terminate()
        emulator.wait(timeout=10)
    if args.check in figures and args.turns in figures:
        first, last = figures[args.check], figures[args.turns]
        print(
            f"RSS after turn {args.check}: {first:.1f} MB; after turn {args.turns}: {last:.1f} MB; "
            f"ratio {last / first:.3f}   (goal <= 1.10)"
        )


if __name__ == "__main__":
    main()
