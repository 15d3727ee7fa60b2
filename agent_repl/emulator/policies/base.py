"""What every policy (the thing that answers in place of the model) takes and returns."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_repl.emulator.blocks import Block
from agent_repl.emulator.models import ModelSpec
from agent_repl.emulator.policies.summary import PlainSummarizer, RequestKind, Summarizer

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ID_TAG = re.compile(r"[ \n]?\[id:[0-9a-zA-Z]+\]\s*$")


@dataclass(frozen=True)
class Reply:
    """API output blocks (text / thinking / tool_use) and the stop reason. Thinking blocks may
    leave `signature` empty: the engine signs them."""

    content: list[Block]
    stop_reason: str = "end_turn"
    # For `refusal`: {"type": "refusal", "category": ..., "explanation": ...}.
    stop_details: dict[str, Any] | None = None


@dataclass(frozen=True)
class PolicyRequest:
    body: dict[str, Any]  # the request as the model sees it (edits applied)
    spec: ModelSpec
    request_index: int
    # Equal for two requests the model would see identically (cache markers ignored).
    conversation_key: str = field(default="")
    # What answers summary and memory requests: the one the server was given.
    summarizer: Summarizer = field(default_factory=PlainSummarizer)


class Policy(Protocol):
    def reply(self, request: PolicyRequest) -> Reply: ...

    def completed(self, request: PolicyRequest, reply: Reply) -> None:
        """Called once the response was fully sent (after `message_stop`)."""
        ...


def summary_reply(request: PolicyRequest, kind: RequestKind) -> Reply:
    """The answer to a summary or memory request, written by the request's summarizer."""
    return Reply([text_block(request.summarizer.summary(request.body, kind))], "end_turn")


def base62(data: bytes, length: int) -> str:
    number = int.from_bytes(data, "big")
    chars: list[str] = []
    while len(chars) < length:
        number, rest = divmod(number, 62)
        chars.append(_BASE62[rest])
    return "".join(chars)


def tool_use_id(*parts: object) -> str:
    """A deterministic `toolu_01...` id (24 base62 characters after the prefix)."""
    seed = "\x1f".join(str(p) for p in parts).encode()
    return "toolu_01" + base62(hashlib.sha256(seed).digest(), 22)


def text_block(text: str) -> Block:
    return {"type": "text", "text": text}


def thinking_block(text: str) -> Block:
    return {"type": "thinking", "thinking": text, "signature": ""}


def tool_use_block(block_id: str, name: str, tool_input: dict[str, Any]) -> Block:
    return {"type": "tool_use", "id": block_id, "name": name, "input": tool_input}


def strip_id_tag(text: str) -> str:
    """Remove the trailing ` [id:xxxxxx]` tag the client adds to user messages."""
    return _ID_TAG.sub("", text)


def messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body.get("messages") or [] if isinstance(m, dict)]


def tool_input(block: Block) -> dict[str, Any]:
    value = block.get("input")
    return value if isinstance(value, dict) else {}


def tool_names(body: dict[str, Any]) -> set[str]:
    return {str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict) and t.get("name")}
