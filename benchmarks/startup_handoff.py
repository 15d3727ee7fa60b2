"""Start-up cost of moving the credentials out of the environment, side by side.

    .venv/bin/python benchmarks/startup_handoff.py [--runs 15] [--baseline DIR]

Times `agent-repl -p hello` as whole processes against the local emulator's demo model, in turns
(A B A B ...): A has the key in its environment, so agent-repl re-executes itself without it
(the hand-over); B gets the same key from the user's settings file (`api_key`), so nothing is
re-executed and everything else is the same. With `--baseline DIR` (a checkout of an earlier
commit), B is that code with the key in the environment instead, which measures the whole
change. Prints the median wall and CPU seconds of each and the median of the pairwise ratios.
Not part of the test suite: the numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
KEY = "sk-ant-api03-startup-benchmark-key"


def run_once(env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `agent-repl -p hello`, children included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "agent_repl", "-p", "hello"],
        cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"agent-repl failed: {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--baseline", type=Path, help="a checkout of an earlier commit to compare with")
    args = parser.parse_args()

    from agent_repl.emulator.server import EmulatorServer
    from agent_repl.offline.demo import DemoPolicy
    from agent_repl.offline.summary import AgentSummarizer

    offline = EmulatorServer(policy=DemoPolicy(), summarizer=AgentSummarizer())
    with tempfile.TemporaryDirectory() as tmp, offline as server:
        work = Path(tmp)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
        base["ANTHROPIC_BASE_URL"] = server.base_url
        home_a, home_b = work / "home-a", work / "home-b"
        home_b.mkdir()
        a = {**base, "AGENT_REPL_HOME": str(home_a), "ANTHROPIC_API_KEY": KEY, "PYTHONPATH": str(ROOT)}
        if args.baseline:
            b = {**a, "AGENT_REPL_HOME": str(home_b), "PYTHONPATH": str(args.baseline.resolve())}
            label = f"B: {args.baseline} with the key in the environment"
        else:
            (home_b / "settings.json").write_text(json.dumps({"api_key": KEY}))
            b = {**base, "AGENT_REPL_HOME": str(home_b), "PYTHONPATH": str(ROOT)}
            label = "B: this code with the key in the settings file (no hand-over)"
        run_once(a, work)  # warm the file cache for both
        run_once(b, work)
        pairs = [(run_once(a, work), run_once(b, work)) for _ in range(args.runs)]

    def median(values: list[float]) -> float:
        return statistics.median(values)

    print("A: this code with the key in the environment (hand-over and re-exec)")
    print(label)
    print(f"runs: {args.runs} each, in turns")
    for name, index in (("wall", 0), ("cpu", 1)):
        a_values = [pa[index] for pa, _ in pairs]
        b_values = [pb[index] for _, pb in pairs]
        ratios = [pa[index] / pb[index] for pa, pb in pairs]
        print(
            f"{name:4}  A median {median(a_values):.3f} s   B median {median(b_values):.3f} s   "
            f"A/B median {median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
