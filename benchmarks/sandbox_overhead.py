"""What the OS sandbox costs a command: `true` through the Bash tool, sandboxed and not, side by side.

    .venv/bin/python benchmarks/sandbox_overhead.py [--runs 200]

Each round runs the same command once each way, in alternating order, through the real Bash tool
(its wrapper, output pipe and process-group handling included), so both series see the same
machine load. The sandbox's rules are built once per session, and its commands start from one
thread of the agent's that entered the sandbox (a plain fork, as for any command); that one-time
cost is printed apart. The goal: the sandboxed run costs at most 10 ms or 1.2x more per command,
whichever is larger. Not part of the test suite: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_repl.core.sandbox import Sandbox, SandboxPolicy, SandboxSettings, detect  # noqa: E402
from agent_repl.core.tooling.tool import ToolContext  # noqa: E402
from agent_repl.tools.bash import Bash, BashArgs  # noqa: E402


async def timed(tool: Bash, ctx: ToolContext, args: BashArgs) -> float:
    start = time.perf_counter()
    out = await tool.run(args, ctx)
    elapsed = time.perf_counter() - start
    if out.is_error:
        raise SystemExit(f"the command failed: {out.content}")
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--command", default="true")
    opts = parser.parse_args()
    status = detect()
    if not status.active:
        raise SystemExit(f"no sandbox here: {status.reason}")
    with tempfile.TemporaryDirectory() as tmp:
        project, temp = Path(tmp) / "project", Path(tmp) / "tmp"
        project.mkdir()
        temp.mkdir()
        settings = SandboxSettings()
        sandbox = Sandbox(settings, SandboxPolicy.build(settings, project=project, temp_dir=temp))
        built = time.perf_counter()
        sandbox._build_ruleset().close()  # what the first command pays once (timed apart)
        build_ms = (time.perf_counter() - built) * 1000
        results = Path(tmp) / "results"
        plain_ctx = ToolContext(cwd=project, tool_results_dir=results)
        boxed_ctx = ToolContext(cwd=project, tool_results_dir=results, sandbox=sandbox)
        tool = Bash()
        args = tool.parse_args({"command": opts.command})
        assert isinstance(args, BashArgs)
        plain: list[float] = []
        boxed: list[float] = []
        for _ in range(5):  # warm both paths
            await timed(tool, plain_ctx, args)
            await timed(tool, boxed_ctx, args)
        for i in range(opts.runs):
            pair = [(plain, plain_ctx), (boxed, boxed_ctx)]
            for series, ctx in pair if i % 2 == 0 else reversed(pair):
                series.append(await timed(tool, ctx, args))
    p_med, b_med = statistics.median(plain) * 1000, statistics.median(boxed) * 1000
    p_mean, b_mean = statistics.fmean(plain) * 1000, statistics.fmean(boxed) * 1000
    print(f"sandbox: {status.line}; rules built once in {build_ms:.1f} ms")
    print(f"{opts.runs} runs of {opts.command!r} through the Bash tool, alternating:")
    print(f"  unsandboxed  median {p_med:7.2f} ms  mean {p_mean:7.2f} ms")
    print(f"  sandboxed    median {b_med:7.2f} ms  mean {b_mean:7.2f} ms")
    extra, ratio = b_med - p_med, b_med / p_med
    allowed = max(10.0, 0.2 * p_med)
    verdict = "within" if extra <= allowed else "OVER"
    print(f"  overhead     {extra:+.2f} ms per command, {ratio:.2f}x ({verdict} the goal of +{allowed:.1f} ms)")


if __name__ == "__main__":
    asyncio.run(main())
