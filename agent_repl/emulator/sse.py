"""A finished Message rendered as the named SSE events of §6.1.

Order: message_start (usage with a small output count, stop_reason null), ping, then for each
block content_block_start / deltas / content_block_stop, then message_delta (stop reason,
cumulative usage, beta context_management) and message_stop. Text goes out in several
`text_delta` chunks, tool input as `input_json_delta` chunks (the first one empty) that join to
the input JSON, thinking as `thinking_delta` chunks with one `signature_delta` just before its stop.
"""

from __future__ import annotations

import json
import re
from typing import Any

Event = tuple[str, dict[str, Any]]

TEXT_CHUNK_CHARS = 48
JSON_CHUNK_CHARS = 40
_WORDS = re.compile(r"\S*\s*")
# Usage keys a message_delta may carry (MessageDeltaUsage); cache_creation is start-only.
_DELTA_USAGE_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "cache_deleted_input_tokens",
    "server_tool_use",
    "output_tokens",
    "output_tokens_details",
)


def encode(event: str, data: dict[str, Any]) -> bytes:
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event}\ndata: {payload}\n\n".encode()


def text_chunks(text: str, size: int = TEXT_CHUNK_CHARS) -> list[str]:
    """Split at word boundaries into pieces of about `size` characters; they join back to `text`."""
    chunks: list[str] = []
    current = ""
    for word in _WORDS.findall(text):
        if current and len(current) + len(word) > size:
            chunks.append(current)
            current = ""
        current += word
    if current:
        chunks.append(current)
    return chunks


def json_chunks(value: Any, size: int = JSON_CHUNK_CHARS) -> list[str]:
    """The input as partial JSON: an empty first chunk, then fixed-size slices of the dump."""
    text = json.dumps(value, ensure_ascii=False)
    return [""] + [text[i : i + size] for i in range(0, len(text), size)]


def _start_shape(block: dict[str, Any]) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        if block.get("citations"):
            start["citations"] = []
        return start
    if kind == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    if kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
        return {**block, "input": {}}
    if kind == "compaction":
        # The signature arrives with the start; the one compaction_delta carries the summary.
        start = {"type": "compaction", "content": None}
        if block.get("signature") is not None:
            start["signature"] = block["signature"]
        return start
    return dict(block)  # redacted_thinking and result blocks arrive complete


def _deltas(block: dict[str, Any]) -> list[dict[str, Any]]:
    kind = block.get("type")
    if kind == "text":
        return [{"type": "text_delta", "text": piece} for piece in text_chunks(block.get("text", ""))]
    if kind == "thinking":
        deltas = [{"type": "thinking_delta", "thinking": p} for p in text_chunks(block.get("thinking", ""))]
        return deltas + [{"type": "signature_delta", "signature": block.get("signature", "")}]
    if kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
        return [{"type": "input_json_delta", "partial_json": p} for p in json_chunks(block.get("input", {}))]
    if kind == "compaction":
        delta = {"type": "compaction_delta", "content": block.get("content")}
        if "encrypted_content" in block:
            delta["encrypted_content"] = block["encrypted_content"]
        return [delta]
    return []


def block_events(index: int, block: dict[str, Any]) -> list[Event]:
    events: list[Event] = [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": _start_shape(block)},
        )
    ]
    for delta in _deltas(block):
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        )
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def message_events(message: dict[str, Any]) -> list[Event]:
    """The full event sequence for a complete non-streaming Message body."""
    usage = dict(message["usage"])
    start_usage = {**usage, "output_tokens": min(1, usage.get("output_tokens", 0))}
    start_usage.pop("output_tokens_details", None)
    head = {k: v for k, v in message.items() if k not in ("content", "usage", "context_management")}
    head.update(content=[], stop_reason=None, stop_sequence=None, stop_details=None, usage=start_usage)
    events: list[Event] = [
        ("message_start", {"type": "message_start", "message": head}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(message["content"]):
        events.extend(block_events(index, block))
    delta: dict[str, Any] = {
        "type": "message_delta",
        "delta": {
            "stop_reason": message.get("stop_reason"),
            "stop_sequence": message.get("stop_sequence"),
            "stop_details": message.get("stop_details"),
        },
        "usage": {k: usage[k] for k in _DELTA_USAGE_KEYS if k in usage},
    }
    if message.get("context_management") is not None:
        delta["context_management"] = message["context_management"]
    events.append(("message_delta", delta))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def cut_point(events: list[Event]) -> int:
    """How many events to send before a mid-stream fault: through the first content delta."""
    for i, (name, _data) in enumerate(events):
        if name == "content_block_delta":
            return i + 1
    for i, (name, _data) in enumerate(events):
        if name == "content_block_start":
            return i + 1
    return min(2, len(events))


def error_event(error_type: str, message: str, request_id: str) -> Event:
    return (
        "error",
        {"type": "error", "error": {"type": error_type, "message": message}, "request_id": request_id},
    )
