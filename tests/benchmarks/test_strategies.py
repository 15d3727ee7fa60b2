"""The peers' pure decisions, on small synthetic views: split points, truncations, kept tails,
the truncate stage and the naive strategy's single breakpoint."""

from __future__ import annotations

from agent_repl.context.rounds import ConversationIndex
from agent_repl.context.state import PipelineConfig, PipelineState
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from benchmarks.replay.compactors import OpenCodeCompactor, budget_truncations, find_split_point
from benchmarks.replay.stages import DropOldestRounds, ResultReplacements
from benchmarks.replay.strategies import one_breakpoint


def round_of(i: int, output: str) -> list[Message]:
    return [
        AssistantMessage(message_id=f"m{i}", content=[ToolUseBlock(id=f"t{i}", name="Bash", input={"command": f"c{i}"})]),
        UserMessage(content=[ToolResultBlock(tool_use_id=f"t{i}", content=output)]),
    ]


def view_with(prompts: int, rounds_per_prompt: int, output: str) -> list[Message]:
    view: list[Message] = [UserMessage(content="<system-reminder>context</system-reminder>", is_meta=True)]
    for p in range(prompts):
        view.append(UserMessage(content=f"prompt {p}"))
        for r in range(rounds_per_prompt):
            view += round_of(p * 100 + r, output)
        view.append(AssistantMessage(message_id=f"end{p}", content=[TextBlock(text="ok")]))
    return view


def test_gemini_split_point_is_the_first_prompt_after_seventy_percent():
    view = view_with(4, 2, "x" * 1000)[1:]  # the opening context is not part of Gemini's history
    prompts = [i for i, m in enumerate(view) if isinstance(m, UserMessage) and not m.is_tool_result()]
    assert find_split_point(view, 0.7) == prompts[3]
    # A single prompt followed by tool rounds leaves nothing Gemini can split at.
    single = view_with(1, 6, "x" * 1000)[1:-1]
    assert find_split_point(single, 0.7) == 0


def test_gemini_truncation_keeps_the_newest_fifty_thousand_tokens_of_outputs():
    lines = "\n".join(f"line {i} " + "y" * 60 for i in range(2000))  # ~35K tokens as chars / 4
    view = view_with(1, 3, lines)
    truncated = budget_truncations(view, {})
    assert set(truncated) == {"t0", "t1"}  # the newest output fits the budget, the two before do not
    assert truncated["t0"].endswith(lines.splitlines()[-1]) and truncated["t0"].count("\n") == 30


def test_opencode_tail_is_whole_recent_turns_or_the_end_of_the_current_one():
    compactor = OpenCodeCompactor(ResultReplacements())
    view = view_with(3, 2, "z" * 4000)  # a turn is ~2K tokens as chars / 4
    start = compactor.tail_start(view, 5_000)
    prompts = [m.text() for m in view[start:] if isinstance(m, UserMessage) and not m.is_tool_result()]
    assert prompts == ["prompt 1", "prompt 2"]  # two whole turns, then the end of the one before
    assert start < view.index(next(m for m in view if m.text() == "prompt 1"))
    one_turn = view_with(1, 8, "z" * 4000)
    start = compactor.tail_start(one_turn, 2_500)
    assert start in ConversationIndex(one_turn).round_starts() and len(one_turn) - start <= 5


def test_truncate_drops_whole_rounds_from_the_front_down_to_half_the_limit():
    state = PipelineState(config=PipelineConfig(context_window=40_000))
    stage = DropOldestRounds()
    view = view_with(1, 12, "word " * 2_000)  # ~2K tokens a round, ~24K in all, limit 20K
    outcome = stage.apply(view, state)
    kept = outcome.view
    assert kept[0] is view[0] and kept[-1] is view[-1] and stage.drops == 1
    assert isinstance(kept[1], AssistantMessage)  # the cut falls at a round start
    ids = {b.id for m in kept if isinstance(m, AssistantMessage) for b in m.tool_uses()}
    results = {b.tool_use_id for m in kept if isinstance(m, UserMessage) for b in m.tool_results()}
    assert ids == results  # no tool_use without its result
    assert state.snip.tokens_freed_since_usage > 0
    # The next projection re-applies the same drop and drops nothing more.
    again = stage.apply(view, state)
    assert [m.uuid for m in again.view] == [m.uuid for m in kept] and stage.drops == 1


def test_one_breakpoint_moves_with_the_end_of_the_conversation():
    mark = {"type": "ephemeral"}
    body = {
        "system": [{"type": "text", "text": "s", "cache_control": mark}],
        "tools": [{"name": "a"}, {"name": "b", "cache_control": mark}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "1", "cache_control": mark}]},
            {"role": "assistant", "content": [{"type": "text", "text": "2"}]},
            {"role": "user", "content": [{"type": "text", "text": "3", "cache_control": mark}]},
        ],
    }
    out = one_breakpoint(body)
    assert "cache_control" not in out["system"][0] and all("cache_control" not in t for t in out["tools"])
    marked = [b for m in out["messages"] for b in m["content"] if "cache_control" in b]
    assert marked == [{"type": "text", "text": "3", "cache_control": mark}]
    assert body["messages"][0]["content"][0]["cache_control"] == mark  # the input is not changed
