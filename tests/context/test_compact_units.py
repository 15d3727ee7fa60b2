"""The pure parts of compaction: thresholds, the kept tail, dropping rounds, the projected slice."""

from __future__ import annotations

import pytest

from agent_repl.context.boundary import slice_after_compact_boundary
from agent_repl.context.compact import kept_tail_start
from agent_repl.context.compact_prompt import continuation_message
from agent_repl.context.estimate import estimate_messages
from agent_repl.context.shrink import CompactionError, drop_oldest_rounds, prompt_too_long_gap
from agent_repl.context.state import PipelineConfig, PipelineState
from agent_repl.context.thresholds import (
    autocompact_threshold,
    blocking_limit,
    compaction_pays,
    effective_window,
    is_at_blocking_limit,
    should_autocompact,
)
from agent_repl.core.model.messages import (
    AssistantMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)


def test_thresholds_for_a_200k_window_match_the_seeds():
    effective = effective_window(200_000)
    assert effective == 180_000
    assert autocompact_threshold(effective) == 167_000  # real sessions compacted at ~165-167K
    assert blocking_limit(effective) == 177_000
    assert should_autocompact(167_000, effective) and not should_autocompact(166_999, effective)
    assert is_at_blocking_limit(177_000, effective) and not is_at_blocking_limit(176_999, effective)
    assert effective_window(200_000, max_output_tokens=8_000) == 192_000


def test_smaller_windows_scale_the_amounts_and_compact_at_the_same_share():
    effective = effective_window(50_000)
    assert effective == 45_000  # a 5K reserve: 10% of the window, as 20K is of 200K
    assert autocompact_threshold(effective) == 41_750  # 83.5% of the window, as 167K is of 200K
    assert blocking_limit(effective) == 44_250
    assert effective_window(50_000, max_output_tokens=2_000) == 48_000
    # Larger windows keep the fixed amounts.
    big = effective_window(1_000_000)
    assert big == 980_000 and autocompact_threshold(big) == 967_000 and blocking_limit(big) == 977_000
    for window in (20_000, 60_000, 100_000, 150_000, 200_000):
        effective = effective_window(window)
        assert autocompact_threshold(effective) < blocking_limit(effective) < effective


def test_prompt_too_long_gap_is_read_from_the_api_message():
    class Error(Exception):
        message = "prompt is too long: 200251 tokens > 200000 maximum"

    assert prompt_too_long_gap(Error()) == 251
    assert prompt_too_long_gap(Exception("something else")) is None


def wire_rounds(n: int) -> list[dict]:
    wire = [{"role": "user", "content": [{"type": "text", "text": "start"}]}]
    for i in range(n):
        wire.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {}}]})
        wire.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 100}]})
    return wire


def test_drop_oldest_rounds_covers_the_gap_or_a_fifth_and_never_orphans_results():
    wire = wire_rounds(10)
    # Rounds open with a user message: (user, assistant) pairs of 200 estimated tokens each.
    trimmed = drop_oldest_rounds(wire, 450, lambda m: 100)
    assert len(wire) - len(trimmed) == 6  # three rounds cover a 450-token gap
    assert trimmed[0]["role"] == "user"
    assert all(b["type"] != "tool_result" for b in trimmed[0]["content"])
    fifth = drop_oldest_rounds(wire, None, lambda m: 100)
    assert len(wire) - len(fifth) == 4  # 11 rounds // 5 = 2 rounds of two messages
    with pytest.raises(CompactionError):
        drop_oldest_rounds(wire[:1], 10, lambda m: 100)


def test_dropping_rounds_keeps_an_earlier_summary_and_what_the_user_typed():
    # Found by the replay benchmark: a summary request retried without its oldest rounds lost the
    # earlier summary at the front, and with it seven user messages.
    wire = wire_rounds(10)
    summary = {"type": "text", "text": continuation_message("6. All User Messages:\n   - the first request")}
    reminder = {"type": "text", "text": "<system-reminder>the date</system-reminder>"}
    wire[0]["content"] = [summary, reminder]
    typed = {"type": "text", "text": "and now the second request"}
    wire[2]["content"].append(typed)  # typed beside the first round's tool result
    trimmed = drop_oldest_rounds(wire, 450, lambda m: 100)
    assert len(wire) - len(trimmed) == 6
    assert trimmed[0]["role"] == "user" and trimmed[0]["content"][:2] == [summary, typed]
    assert all(b["type"] != "tool_result" for b in trimmed[0]["content"])
    assert reminder not in trimmed[0]["content"]


def test_kept_tail_is_the_current_turn_when_it_fits():
    state = PipelineState()
    view = [
        UserMessage(content="first"),
        AssistantMessage(message_id="m1", content=[TextBlock(text="ok")]),
        UserMessage(content="second"),
        AssistantMessage(message_id="m2", content=[ToolUseBlock(id="t", name="Read", input={})]),
        UserMessage(content=[ToolResultBlock(tool_use_id="t", content="small")]),
    ]
    assert kept_tail_start(view, state) == 2
    assert kept_tail_start(view, state, max_tokens=1) is None


def test_the_slice_puts_the_kept_tail_after_the_summary_and_skips_undone_boundaries():
    early = UserMessage(content="early")
    kept_prompt = UserMessage(content="kept prompt")
    reply = AssistantMessage(message_id="m", content=[TextBlock(text="reply")])
    summary = UserMessage(content="summary", is_compact_summary=True)
    attachment = UserMessage(content="file", is_meta=True)
    boundary = SystemMessage(subtype="compact_boundary", metadata={"keptFromUuid": kept_prompt.uuid})
    after = UserMessage(content="after")
    history = [early, kept_prompt, reply, boundary, summary, attachment, after]
    assert slice_after_compact_boundary(history) == [boundary, summary, kept_prompt, reply, attachment, after]
    assert slice_after_compact_boundary(history, {boundary.uuid}) == history
    no_kept = SystemMessage(subtype="compact_boundary")
    assert slice_after_compact_boundary([early, no_kept, summary]) == [no_kept, summary]


def test_a_kept_tail_reaching_into_an_earlier_compaction_is_taken_from_that_view():
    a, b, c, d, e, f = (UserMessage(content=x) for x in "ABCDEF")
    s1 = UserMessage(content="summary one", is_compact_summary=True)
    att1 = UserMessage(content="file", is_meta=True)
    b1 = SystemMessage(subtype="compact_boundary", metadata={"keptFromUuid": c.uuid})
    g, h = UserMessage(content="G"), UserMessage(content="H")
    b2 = SystemMessage(subtype="compact_boundary", metadata={"keptFromUuid": e.uuid})
    s2 = UserMessage(content="summary two", is_compact_summary=True)
    history = [a, b, c, d, e, f, b1, s1, att1, g, h, b2, s2]
    assert slice_after_compact_boundary(history) == [b2, s2, e, f, att1, g, h]
    # Undoing the second compaction brings back the first one's view.
    assert slice_after_compact_boundary(history, {b2.uuid}) == [b1, s1, c, d, e, f, att1, g, h, b2, s2]


def test_the_cost_aware_trigger_compacts_only_when_the_reads_it_saves_outweigh_the_compaction():
    # 600K tokens carried over 150 more requests: reading 540K fewer each time pays for a
    # compaction costing 150K units.
    assert compaction_pays(600_000, 60_000, 150_000, 150, read=0.1)
    # Too few requests left to earn it back, or a context that would not shrink.
    assert not compaction_pays(600_000, 60_000, 150_000, 2, read=0.1)
    assert not compaction_pays(50_000, 50_000, 2_000, 500, read=0.1)
    # Cheaper reads make carrying cheaper: the same context pays later.
    assert compaction_pays(100_000, 40_000, 60_000, 20, read=0.1)
    assert not compaction_pays(100_000, 40_000, 60_000, 20, read=0.01)
    # With a margin the saving (120K) must be that many times the cost (60K).
    assert not compaction_pays(100_000, 40_000, 60_000, 20, read=0.1, margin=2.0)
    assert compaction_pays(100_000, 40_000, 60_000, 21, read=0.1, margin=2.0)


def test_kept_tail_never_starts_inside_a_streamed_reply_split_around_its_results():
    """A reply stored as entries with a result between them (parallel calls) is one round: a tail
    starting at its second call would send that call without the thinking and calls before it."""
    state = PipelineState()
    view = [
        UserMessage(content="go"),
        AssistantMessage(message_id="m1", content=[ToolUseBlock(id="a", name="Read", input={})]),
        UserMessage(content=[ToolResultBlock(tool_use_id="a", content="x" * 400)]),
        AssistantMessage(message_id="m1", content=[ToolUseBlock(id="b", name="Read", input={})]),
        UserMessage(content=[ToolResultBlock(tool_use_id="b", content="y")]),
    ]
    assert kept_tail_start(view, state) == 0  # the whole turn fits
    assert kept_tail_start(view, state, max_tokens=estimate_messages(view[1:], state)) == 1
    assert kept_tail_start(view, state, max_tokens=estimate_messages(view[3:], state)) is None


def test_the_cost_aware_trigger_is_on_from_its_window_size_up():
    def on(window: int, **config: int) -> bool:
        pipeline_config = PipelineConfig(**config)  # type: ignore[arg-type]
        pipeline_config.set_window(window)
        return pipeline_config.cost_trigger

    assert on(200_000) and on(1_000_000) and not on(50_000)
    assert on(50_000, cost_trigger_min_window=50_000) and not on(1_000_000, cost_trigger_min_window=0)
