"""The whole message a stream of Messages API events adds up to, as the SDK's stream helper builds it.

`message_start` gives the message; each block starts whole (`content_block_start`) and grows by
its deltas: text, thinking, the signature (set once), citations, a compaction's content, and a
tool call's input as pieces of JSON parsed when the block ends (partially, as the SDK does, so a
call cut off by `max_tokens` keeps what arrived). `message_delta` sets the stop reason and
overwrites the usage counts it carries (they are running totals).
"""

from __future__ import annotations

import copy
from typing import Any

from jiter import from_json

# Blocks whose input streams as JSON pieces.
_TOOL_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
# With this beta the API may stream a string value before it is complete.
_FINE_GRAINED_TOOL_STREAMING = "fine-grained-tool-streaming-2025-05-14"
_USAGE_OVERWRITTEN = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "server_tool_use",
    "output_tokens_details",
    "iterations",
    "fallback_credit",
)


class StreamOrderError(RuntimeError):
    """An event came before the `message_start` every stream begins with."""


class MessageAccumulator:
    def __init__(self, betas: list[str] | None = None) -> None:
        self.message: dict[str, Any] | None = None
        self._json: dict[int, bytes] = {}
        self._trailing_strings = _FINE_GRAINED_TOOL_STREAMING in (betas or [])

    def add(self, event: dict[str, Any]) -> tuple[str, str] | None:
        """Take one event; ("text" | "thinking", the new text) when it added to a text or thinking block."""
        kind = event.get("type")
        if self.message is None:
            if kind != "message_start":
                raise StreamOrderError(f'Unexpected event order, got {kind} before "message_start"')
            self.message = copy.deepcopy(event["message"])
            self.message.setdefault("content", [])
            return None
        content: list[dict[str, Any]] = self.message["content"]
        if kind == "content_block_start":
            block = copy.deepcopy(event["content_block"])
            content.append(block)
            if block.get("type") == "fallback" and isinstance(block.get("to"), dict):
                self.message["model"] = block["to"].get("model", self.message.get("model"))
        elif kind == "content_block_delta":
            return self._delta(event["index"], content[event["index"]], event["delta"])
        elif kind == "content_block_stop":
            self._parse_input(event["index"], content[event["index"]])
        elif kind == "message_delta":
            self._message_delta(event)
        return None

    def _delta(self, index: int, block: dict[str, Any], delta: dict[str, Any]) -> tuple[str, str] | None:
        kind, block_type = delta.get("type"), block.get("type")
        if kind == "text_delta" and block_type == "text":
            block["text"] = block.get("text", "") + delta["text"]
            return ("text", delta["text"])
        if kind == "thinking_delta" and block_type == "thinking":
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
            return ("thinking", delta["thinking"])
        if kind == "signature_delta" and block_type == "thinking":
            block["signature"] = delta["signature"]
        elif kind == "input_json_delta" and block_type in _TOOL_INPUT_BLOCKS:
            self._json[index] = self._json.get(index, b"") + delta.get("partial_json", "").encode()
        elif kind == "citations_delta" and block_type == "text":
            block["citations"] = [*(block.get("citations") or []), delta["citation"]]
        elif kind == "compaction_delta" and block_type == "compaction":
            block["content"] = delta.get("content")
            block["encrypted_content"] = delta.get("encrypted_content")
        return None

    def _parse_input(self, index: int, block: dict[str, Any]) -> None:
        pieces = self._json.pop(index, b"")
        if not pieces:
            return
        try:
            block["input"] = from_json(pieces, partial_mode="trailing-strings" if self._trailing_strings else True)
        except ValueError as exc:
            raise ValueError(
                f"Unable to parse tool parameter JSON from model. Please retry your request or adjust your "
                f"prompt. Error: {exc}. JSON: {pieces.decode('utf-8', 'replace')}"
            ) from exc

    def _message_delta(self, event: dict[str, Any]) -> None:
        assert self.message is not None
        delta = event.get("delta") or {}
        self.message["stop_reason"] = delta.get("stop_reason")
        self.message["stop_sequence"] = delta.get("stop_sequence")
        self.message["stop_details"] = delta.get("stop_details")
        if delta.get("container") is not None:
            self.message["container"] = delta["container"]
        for name in ("context_management", "input_transformations"):
            if event.get(name) is not None:
                self.message[name] = event[name]
        usage = event.get("usage") or {}
        total = self.message.setdefault("usage", {})
        total["output_tokens"] = usage.get("output_tokens")
        for name in _USAGE_OVERWRITTEN:
            if usage.get(name) is not None:
                total[name] = usage[name]

    def final(self) -> dict[str, Any]:
        """The message so far (the stream may end without `message_stop`)."""
        if self.message is None:
            raise StreamOrderError("the stream ended before its message_start")
        for index, block in enumerate(self.message["content"]):
            if index in self._json:
                self._parse_input(index, block)
        return self.message
