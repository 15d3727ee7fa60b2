"""API normalization (SPEC R3.1): the projected view becomes wire messages.

Runs after every stage, just before the wire. It never changes the history: it builds new
dicts. Its last step repairs tool pairing, so whatever an earlier stage, a crash or an
interruption left behind, every tool_use reaches the API with exactly one tool_result.
"""

from __future__ import annotations

from typing import Any

from agent_repl.core.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    SystemMessage,
    TextBlock,
)

WireMessage = dict[str, Any]

INTERRUPTED_TOOL_RESULT = "[Tool call interrupted: no result was recorded for this call]"


def block_to_wire(block: ContentBlock) -> dict[str, Any]:
    """One content block as the API takes it; the same block always gives the same dict."""
    data = block.model_dump(mode="json", exclude_none=True)
    if data.get("type") == "tool_result" and not data.get("is_error"):
        data.pop("is_error", None)
    return data


def _is_thinking(block: dict[str, Any]) -> bool:
    return block.get("type") in ("thinking", "redacted_thinking")


def merge_into_wire(view: list[Message]) -> list[WireMessage]:
    """Drop system entries and merge consecutive same-role entries (a split assistant reply,
    parallel tool results stored as N user entries) into single wire messages."""
    wire: list[WireMessage] = []
    for message in view:
        if isinstance(message, SystemMessage):
            continue
        role = "assistant" if isinstance(message, AssistantMessage) else "user"
        source = message.content if isinstance(message, AssistantMessage) else message.blocks()
        # The API refuses empty text blocks; an empty streamed text block carries nothing anyway.
        blocks = [block_to_wire(b) for b in source if not (isinstance(b, TextBlock) and not b.text)]
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    for message in wire:
        if message["role"] == "user":
            # The API wants tool results before any text in a user message.
            results = [b for b in message["content"] if b.get("type") == "tool_result"]
            others = [b for b in message["content"] if b.get("type") != "tool_result"]
            message["content"] = results + others
    return wire


def drop_orphan_thinking(view: list[Message]) -> list[Message]:
    """Drop replies (grouped by `message_id`) that hold nothing but thinking: an interrupted stream."""
    substantive = {
        m.message_id
        for m in view
        if isinstance(m, AssistantMessage) and any(b.type not in ("thinking", "redacted_thinking") for b in m.content)
    }
    return [m for m in view if not isinstance(m, AssistantMessage) or m.message_id in substantive]


def strip_trailing_thinking(wire: list[WireMessage]) -> list[WireMessage]:
    """The last assistant message may not end with thinking."""
    if wire and wire[-1]["role"] == "assistant":
        content = wire[-1]["content"]
        while content and _is_thinking(content[-1]):
            content.pop()
    return [m for m in wire if m["content"]]


def repair_tool_pairing(wire: list[WireMessage]) -> list[WireMessage]:
    """Every tool_use gets exactly one tool_result in the next message; orphans and duplicates go."""
    repaired: list[WireMessage] = []
    seen_tool_use_ids: set[str] = set()
    for message in wire:
        if message["role"] == "assistant":
            content = []
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    if block["id"] in seen_tool_use_ids:
                        continue
                    seen_tool_use_ids.add(block["id"])
                content.append(block)
            repaired.append({"role": "assistant", "content": content})
            continue
        previous = repaired[-1] if repaired and repaired[-1]["role"] == "assistant" else None
        expected = [b["id"] for b in previous["content"] if b.get("type") == "tool_use"] if previous else []
        results: dict[str, dict[str, Any]] = {}
        others = []
        for block in message["content"]:
            if block.get("type") == "tool_result":
                if block["tool_use_id"] in expected and block["tool_use_id"] not in results:
                    results[block["tool_use_id"]] = block
            else:
                others.append(block)
        ordered = [results.get(tid) or _interrupted_result(tid) for tid in expected]
        repaired.append({"role": "user", "content": ordered + others})
    if repaired and repaired[-1]["role"] == "assistant":
        pending = [b["id"] for b in repaired[-1]["content"] if b.get("type") == "tool_use"]
        if pending:
            repaired.append({"role": "user", "content": [_interrupted_result(tid) for tid in pending]})
    return [m for m in repaired if m["content"]]


def _interrupted_result(tool_use_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": INTERRUPTED_TOOL_RESULT, "is_error": True}


def normalize_for_api(view: list[Message]) -> list[WireMessage]:
    return repair_tool_pairing(strip_trailing_thinking(merge_into_wire(drop_orphan_thinking(view))))
