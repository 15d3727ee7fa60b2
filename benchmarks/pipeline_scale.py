"""Does the per-turn projection cost follow the view or the history? (issue 4)

Builds two histories with the same ~200K-token view after a compact boundary: one of about
1,000 messages and one of about 10,000 (tens of MB of tool output before the boundary). Then
simulates turns side by side, alternating between the two (a tool call, its result, a prompt,
project, the usage fed back), and prints the median projection
time per turn, the peak memory allocated during projection, and their ratios, measured side by
side in one run.

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

from agent_repl.context.budget import ToolResultBudget  # noqa: E402
from agent_repl.context.estimate import estimate_messages  # noqa: E402
from agent_repl.context.microcompact import Microcompact  # noqa: E402
from agent_repl.context.pipeline import Pipeline  # noqa: E402
from agent_repl.context.snip import SnipStage  # noqa: E402
from agent_repl.context.state import PipelineConfig, PipelineState  # noqa: E402
from agent_repl.core.messages import (  # noqa: E402
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)

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
    config = PipelineConfig(cache_editing=True, effective_window=980_000, context_window=1_000_000)
    # The default stage list (bootstrap.build_pipeline), on a 1M-token model.
    return Pipeline([ToolResultBudget(directory), SnipStage(), Microcompact()], PipelineState(config=config))


class Run:
    """One history and its pipeline, advanced a turn at a time."""

    def __init__(self, total: int, view_messages: int, words: int, directory: Path) -> None:
        self.history = build_history(total, view_messages, words)
        self.history_mb = sum(len(m.model_dump_json()) for m in self.history) / 1e6
        self.pipeline = make_pipeline(directory)
        first = self.pipeline.project(self.history)  # warm-up: the first turn sees every result once
        self.view_tokens = estimate_messages(first.view, self.pipeline.state)
        self.times: list[float] = []

    def turn(self, turn: int) -> None:
        self.history += exchange(100_000 + turn, 50)
        self.history.append(UserMessage(content=f"next {turn}"))
        gc.collect()
        started = time.perf_counter()
        self.pipeline.project(self.history)
        self.times.append(time.perf_counter() - started)
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
            "peak_mb": self.peak_mb(),
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=30)
    args = parser.parse_args()
    view_messages, words = 800, 230  # ~200K tokens after the boundary
    with tempfile.TemporaryDirectory() as small_dir, tempfile.TemporaryDirectory() as large_dir:
        runs = [Run(1_000, view_messages, words, Path(small_dir)), Run(10_000, view_messages, words, Path(large_dir))]
        # Side by side, turn by turn, so the machine's noise falls on both alike.
        for turn in range(args.turns):
            for run in runs:
                run.turn(turn)
        small, large = (run.row() for run in runs)
    print(f"{'history':>10} {'history MB':>11} {'view tokens':>12} {'ms/turn':>9} {'peak MB':>8}")
    for row in (small, large):
        print(
            f"{row['messages']:>10,} {row['history_mb']:>11.1f} {row['view_tokens']:>12,} "
            f"{row['ms_per_turn']:>9.2f} {row['peak_mb']:>8.2f}"
        )
    print(f"time ratio 10K/1K: {large['ms_per_turn'] / small['ms_per_turn']:.2f} (goal <= 1.5)")
    print(f"peak memory ratio 10K/1K: {large['peak_mb'] / small['peak_mb']:.2f}")
    print(f"ms per turn at ~{large['view_tokens']:,}-token view: {large['ms_per_turn']:.2f} (goal <= 20)")


if __name__ == "__main__":
    main()
