"""The conversation as Markdown (/export): the user's prompts, the model's replies, each tool call
with its input and a bounded copy of its result. Reminders and other injected text stay out."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime

from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolUseBlock,
    UserMessage,
)

# The most characters of one tool result the export keeps; the rest is named, not copied.
RESULT_CHARS = 4_000


def _fence(text: str, info: str = "") -> str:
    """A fenced block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _bounded(text: str) -> str:
    if len(text) <= RESULT_CHARS:
        return text
    return f"{text[:RESULT_CHARS]}\n… ({len(text) - RESULT_CHARS} more characters)"


def _user(message: UserMessage) -> list[str]:
    if message.is_meta:
        return []
    if message.is_compact_summary:
        return ["---", "*The conversation before this point was summarized:*", message.text().strip()]
    parts = []
    for result in message.tool_results():
        label = "Error" if result.is_error else "Result"
        parts.append(f"{label}:\n\n{_fence(_bounded(result.text().rstrip()))}")
    text = message.text().strip()
    if text and not message.is_tool_result():
        parts.append(f"## User\n\n{text}")
    return parts


def _assistant(message: AssistantMessage, opened: bool) -> list[str]:
    parts = [] if opened else ["## Assistant"]
    for block in message.content:
        if isinstance(block, TextBlock) and block.text.strip():
            parts.append(block.text.strip())
        elif isinstance(block, ToolUseBlock):
            parts.append(f"**{block.name}**\n\n{_fence(json.dumps(block.input, indent=2, ensure_ascii=False), 'json')}")
    return parts


def conversation_markdown(messages: Sequence[Message], *, title: str, exported_at: datetime) -> str:
    """The whole history as one Markdown document; a reply split over several entries is one section."""
    parts = [f"# {title}", f"*Exported {exported_at.strftime('%Y-%m-%d %H:%M')}*"]
    last_assistant: str | None = None
    for message in messages:
        if isinstance(message, AssistantMessage):
            if message.is_synthetic and not message.text().strip():
                continue
            parts += _assistant(message, opened=last_assistant == message.message_id)
            last_assistant = message.message_id
        elif isinstance(message, UserMessage):
            added = _user(message)
            if added and not message.is_tool_result():
                last_assistant = None
            parts += added
        elif isinstance(message, SystemMessage) and message.subtype == "compact_boundary":
            last_assistant = None
    return "\n\n".join(parts) + "\n"
