"""Does the per-turn projection cost follow the view or the history, and what does a 1M-token view cost?

Builds two histories with the same ~200K-token view after a compact boundary: one of about
1,000 messages and one of about 10,000 (tens of MB of tool output before the boundary), and a
third whose view after the boundary is about 900K tokens (a 1M window just before it compacts).
Then simulates turns side by side, alternating between them (a tool call, its result, a prompt,
project, the usage fed back), and prints the median projection time per turn (thread CPU time
and wall time), the peak memory allocated during projection, and the ratios, measured side by
side in one run. The pipeline is the default stage list on the public API (no cache editing).

    .venv/bin/python benchmarks/pipeline_scale.py [--turns 30]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent_repl.context.estimate import estimate_messages  # noqa: E402
from agent_repl.context.pipeline import context_pipeline  # noqa: E402
from agent_repl.context.projector import Pipeline  # noqa: E402
from agent_repl.context.state import PipelineConfig  # noqa: E402
from agent_repl.core.model.messages import (  # noqa: E402
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from agent_repl.tools import builtin_tools  # noqa: E402

WORDS = "the quick brown fox jumps over a lazy dog while parsing config files and running tests".split()


def text_of(n_words: int, seed: int) -> str:
    return " ".join(WORDS[(seed + i * 7) % len(WORDS)] + str((seed + i) % 97) for i in range(n_words))


def exchange(i: int, result_words: int) -> list[Message]:
    return [
        AssistantMessage(
            message_id=f"msg_{i}",
            content=[ToolUseBlock(id=f"toolu_{i}", name="Bash", input={"command": f"cat file_{i}.txt"})],
            usage=Usage(input_tokens=10, output_tokens=20),
        ),
        UserMessage(content=[ToolResultBlock(tool_use_id=f"toolu_{i}", content=text_of(result_words, i))]),
    ]


def build_history(total_messages: int, view_messages: int, view_result_words: int) -> list[Message]:
    history: list[Message] = [UserMessage(content="start the work")]
    before = (total_messages - view_messages) // 2
    for i in range(before):
        history += exchange(i, 2_000)  # ~10 KB each: tens of MB before the boundary
    history.append(SystemMessage(subtype="compact_boundary", content="Conversation compacted", metadata={"trigger": "auto"}))
    history.append(UserMessage(content="summary of everything before", is_compact_summary=True, is_meta=True))
    for i in range(before, before + view_messages // 2):
        history += exchange(i, view_result_words)
    return history


def make_pipeline(directory: Path) -> Pipeline:
    # The clearable tools as the built-in tools declare them, as a session's pipeline has them.
    config = PipelineConfig(clearable_tools=frozenset(t.name for t in builtin_tools() if t.microcompact_clearable))
    config.set_window(1_000_000)
    # The product's flowchart, on a 1M-token model and the public API.
    return context_pipeline(config, directory)


class Run:
    """One history and its pipeline, advanced a turn at a time."""

    def __init__(self, total: int, view_messages: int, words: int, directory: Path) -> None:
        self.history = build_history(total, view_messages, words)
        self.history_mb = sum(len(m.model_dump_json()) for m in self.history) / 1e6
        self.pipeline = make_pipeline(directory)
        first = self.pipeline.project(self.history)  # warm-up: the first turn sees every result once
        self.view_tokens = estimate_messages(first.view, self.pipeline.state)
        self.times: list[float] = []
        self.cpu: list[float] = []

    def turn(self, turn: int) -> None:
        self.history += exchange(100_000 + turn, 50)
        self.history.append(UserMessage(content=f"next {turn}"))
        gc.collect()
        started, cpu = time.perf_counter(), time.thread_time()
        self.pipeline.project(self.history)
        self.times.append(time.perf_counter() - started)
        self.cpu.append(time.thread_time() - cpu)
        # As the loop does after each reply: the API's own count anchors the next estimate.
        reply = AssistantMessage(message_id=f"a{turn}", content=[TextBlock(text="working")])
        self.history.append(reply)
        self.pipeline.observe_response(Usage(input_tokens=self.view_tokens, output_tokens=5), anchor_uuid=reply.uuid)

    def peak_mb(self) -> float:
        """Memory separately: tracing allocations slows Python down several times."""
        self.history += exchange(200_000, 50)
        gc.collect()
        tracemalloc.start()
        self.pipeline.project(self.history)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak / 1e6

    def row(self) -> dict[str, float]:
        return {
            "messages": len(self.history),
            "history_mb": self.history_mb,
            "view_tokens": self.view_tokens,
            "ms_per_turn": statistics.median(self.times) * 1000,
            "cpu_ms_per_turn": statistics.median(self.cpu) * 1000,
            "peak_mb": self.peak_mb(),
        }


def measure(turns: int = 30) -> list[dict[str, float]]:
    """The three histories, `turns` turns each, side by side: one row each (200K view with 1K and
    10K messages, then the ~900K view)."""
    view_messages, words = 800, 230  # ~200K tokens after the boundary
    with tempfile.TemporaryDirectory() as small_dir, tempfile.TemporaryDirectory() as large_dir, \
            tempfile.TemporaryDirectory() as wide_dir:
        runs = [
            Run(1_000, view_messages, words, Path(small_dir)),
            Run(10_000, view_messages, words, Path(large_dir)),
            Run(3_000, 2_400, 345, Path(wide_dir)),  # ~900K tokens after the boundary
        ]
        # Side by side, turn by turn, so the machine's noise falls on all alike.
        for turn in range(turns):
            for run in runs:
                run.turn(turn)
        return [run.row() for run in runs]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=30)
    args = parser.parse_args()
    small, large, wide = measure(args.turns)
    print(f"{'history':>10} {'history MB':>11} {'view tokens':>12} {'CPU ms/turn':>12} {'wall ms/turn':>13} {'peak MB':>8}")
    for row in (small, large, wide):
        print(
            f"{row['messages']:>10,} {row['history_mb']:>11.1f} {row['view_tokens']:>12,} "
            f"{row['cpu_ms_per_turn']:>12.2f} {row['ms_per_turn']:>13.2f} {row['peak_mb']:>8.2f}"
        )
    print(f"time ratio 10K/1K: {large['cpu_ms_per_turn'] / small['cpu_ms_per_turn']:.2f} (goal <= 1.5)")
    print(f"peak memory ratio 10K/1K: {large['peak_mb'] / small['peak_mb']:.2f}")
    for row in (large, wide):
        print(f"CPU ms per turn at a ~{row['view_tokens']:,}-token view: {row['cpu_ms_per_turn']:.2f} (goal <= 20)")


if __name__ == "__main__":
    main()
