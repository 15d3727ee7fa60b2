"""A Claude Code 2.1.3xx compact boundary names the entries it carried over; the view keeps them."""

from __future__ import annotations

from agent_repl.context.boundary import slice_after_compact_boundary
from agent_repl.core.model.messages import (
    AssistantMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)


def _history(metadata: dict) -> list:
    return [
        UserMessage(uuid="p", content="inspect the project"),
        AssistantMessage(uuid="a1", message_id="m1", content=[ToolUseBlock(id="t1", name="Read", input={})]),
        UserMessage(uuid="r1", content=[ToolResultBlock(tool_use_id="t1", content="one")]),
        AssistantMessage(uuid="a2", message_id="m2", content=[ToolUseBlock(id="t2", name="Bash", input={})]),
        UserMessage(uuid="r2", content=[ToolResultBlock(tool_use_id="t2", content="two")]),
        SystemMessage(uuid="b", subtype="compact_boundary", content="Conversation compacted", metadata=metadata),
        UserMessage(uuid="s", content="summary", is_compact_summary=True),
        AssistantMessage(uuid="a3", message_id="m3", content=[TextBlock(text="done")]),
    ]


def _uuids(view: list) -> list[str]:
    return [m.uuid for m in view]


def test_the_preserved_messages_follow_the_summary():
    history = _history({"trigger": "auto", "preservedMessages": {"anchorUuid": "s", "uuids": ["a2", "r2"]}})
    assert _uuids(slice_after_compact_boundary(history)) == ["b", "s", "a2", "r2", "a3"]


def test_a_preserved_segment_alone_names_its_span_from_head_to_tail():
    history = _history({"preservedSegment": {"headUuid": "a2", "anchorUuid": "s", "tailUuid": "r2"}})
    assert _uuids(slice_after_compact_boundary(history)) == ["b", "s", "a2", "r2", "a3"]


def test_a_boundary_naming_nothing_it_has_keeps_nothing_before_it():
    history = _history({"preservedSegment": {"headUuid": "gone", "tailUuid": "r2"}})
    assert _uuids(slice_after_compact_boundary(history)) == ["b", "s", "a3"]
    assert _uuids(slice_after_compact_boundary(_history({"trigger": "manual"}))) == ["b", "s", "a3"]
