"""Start-up of print mode against the cost of importing the anthropic SDK, side by side.

    .venv/bin/python benchmarks/startup_print.py [--runs 15] [--baseline DIR]

Times, as whole processes and in turns (A B A B ...), A: `agent-repl -p hi` on the offline demo
model (no key: the agent starts the local emulator itself, as a newcomer's first run does) and
B: `python -c "import anthropic"`. Prints the median wall and CPU seconds of each and the median
of the pairwise wall ratios A/B (issue 30 asks for at most 0.6), the ratio of the fastest runs
(the least disturbed by other work on a busy machine) and of the CPU medians. With `--baseline DIR` (a
checkout of an earlier commit) a third command, C, runs that code's `-p hi` in the same turns.
CPU counts the agent's process only: the emulator runs in a process of its own, which the agent
does not wait for. Byte-compiled files are written on the warm-up runs, as an installed package
has them. Not part of the test suite: the numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_once(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--baseline", type=Path, help="a checkout of an earlier commit to time beside")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "AGENT_REPL_")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        base["AGENT_REPL_HOME"] = str(work / "home")
        commands = {
            "A": ([sys.executable, "-m", "agent_repl", "-p", "hi"], {**base, "PYTHONPATH": str(ROOT)}),
            "B": ([sys.executable, "-c", "import anthropic"], base),
        }
        if args.baseline:
            env = {**base, "PYTHONPATH": str(args.baseline.resolve()), "AGENT_REPL_HOME": str(work / "home-c")}
            commands["C"] = ([sys.executable, "-m", "agent_repl", "-p", "hi"], env)
        for command, env in commands.values():  # warm the file cache and write the .pyc files
            run_once(command, env, work)
            run_once(command, env, work)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, (command, env) in commands.items():
                times[name].append(run_once(command, env, work))

    labels = {
        "A": "A: agent-repl -p hi (offline demo model)",
        "B": 'B: python -c "import anthropic"',
        "C": f"C: agent-repl -p hi at {args.baseline}",
    }
    print(f"runs: {args.runs} each, in turns; python {sys.version.split()[0]}, {os.cpu_count()} cores")
    for name, values in times.items():
        walls, cpus = [w for w, _ in values], [c for _, c in values]
        print(
            f"{labels[name]:44} wall median {statistics.median(walls):.3f} s, min {min(walls):.3f} s   "
            f"cpu median {statistics.median(cpus):.3f} s"
        )
    for name in [n for n in ("A", "C") if n in times]:
        ratios = [a[0] / b[0] for a, b in zip(times[name], times["B"], strict=True)]
        best = min(w for w, _ in times[name]) / min(w for w, _ in times["B"])
        cpu = statistics.median(c for _, c in times[name]) / statistics.median(c for _, c in times["B"])
        print(
            f"{name}/B wall: median of pairwise ratios {statistics.median(ratios):.2f} "
            f"(min {min(ratios):.2f}, max {max(ratios):.2f}); fastest against fastest {best:.2f}; cpu {cpu:.2f}"
        )
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
