"""Who writes a summary when the emulator is asked for one: the `Summarizer` its caller injects.

The emulator knows when it is asked: a summary or memory request opens with a marker of the
contract, and an on-demand compaction request names `compaction`. What belongs in the summary is
the client's business, so the server takes a `Summarizer` (`EmulatorServer(summarizer=...)`).
The default, `PlainSummarizer`, writes a few plain lines about the conversation; the agent's
nine-section summary lives with the offline mode (agent_repl.offline.summary).
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from agent_repl.contract import MEMORY_REQUEST_MARKER, SUMMARY_REQUEST_MARKER
from agent_repl.emulator.blocks import content_blocks

RequestKind = Literal["summary", "memory"]
_QUOTE_CHARS = 300


class Summarizer(Protocol):
    def summary(self, body: dict[str, Any], kind: RequestKind) -> str:
        """The text that answers a summary or memory request."""
        ...

    def compaction(self, body: dict[str, Any], instructions: str | None) -> str:
        """The content of an on-demand compaction block for everything `body` holds."""
        ...


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body.get("messages") or [] if isinstance(m, dict)]


def request_kind(body: dict[str, Any]) -> RequestKind | None:
    """A summary or memory request: a text block of the last user message opens with the marker
    (the marker may share the message with tool results or a prompt it was merged with)."""
    users = [m for m in _messages(body) if m.get("role") == "user"]
    if not users:
        return None
    for block in content_blocks(users[-1].get("content")):
        text = str(block.get("text", "")).lstrip() if block.get("type") == "text" else ""
        if text.startswith(SUMMARY_REQUEST_MARKER):
            return "summary"
        if text.startswith(MEMORY_REQUEST_MARKER):
            return "memory"
    return None


def _user_texts(conversation: list[dict[str, Any]]) -> list[str]:
    """The user's text blocks, oldest first, without the summary and memory requests themselves."""
    markers = (SUMMARY_REQUEST_MARKER, MEMORY_REQUEST_MARKER)
    return [
        text
        for message in conversation
        if message.get("role") == "user"
        for block in content_blocks(message.get("content"))
        if block.get("type") == "text"
        and (text := str(block.get("text", "")).strip())
        and not text.startswith(markers)
    ]


def _quote(text: str) -> str:
    return text if len(text) <= _QUOTE_CHARS else text[:_QUOTE_CHARS] + "…"


class PlainSummarizer:
    """A short plain summary that knows no client's format: how long the conversation is, how it
    began and what was asked last."""

    def _plain(self, body: dict[str, Any]) -> str:
        conversation = _messages(body)
        said = _user_texts(conversation)
        replies = sum(1 for m in conversation if m.get("role") == "assistant")
        lines = [f"The conversation so far: {len(conversation)} messages, {replies} of them from the assistant."]
        if said:
            lines.append(f"It began with: {_quote(said[0])}")
        if len(said) > 1:
            lines.append(f"The latest request: {_quote(said[-1])}")
        return "\n".join(lines)

    def summary(self, body: dict[str, Any], kind: RequestKind) -> str:
        return self._plain(body)

    def compaction(self, body: dict[str, Any], instructions: str | None) -> str:
        focus = (instructions or "").strip()
        return f"Focus requested: {focus}\n\n{self._plain(body)}" if focus else self._plain(body)
