"""The extractive summary of a collapsed span (docs/architecture.md 5.5): no model call, a few lines per round.

Every typed user message is quoted verbatim (what the user said is never lost); each tool call
is one line with its key input and outcome (exit code, line count, or an error's first line);
the assistant's text is cut to its opening words. Tool output itself is left out: freeing it is
the point.
"""

from __future__ import annotations

import re
from typing import Any

from agent_repl.context.state import CLEARED_TOOL_RESULT
from agent_repl.core.model.messages import (
    AssistantMessage,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

ASSISTANT_TEXT_CHARS = 120
TOOL_INPUT_CHARS = 120
OUTCOME_CHARS = 100
# A one-line result is shown itself when this short.
ONE_LINE_CHARS = 60
PERSISTED_PREFIX = "<persisted-output>"
# Inputs that say what a call was about, in the order they are shown.
KEY_INPUTS = ("command", "file_path", "pattern", "path", "url", "query")


def _clip(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def tool_call_line(use: ToolUseBlock) -> str:
    values = [use.input[key] for key in KEY_INPUTS if isinstance(use.input.get(key), str) and use.input[key]]
    if not values:
        values = [v for v in use.input.values() if isinstance(v, str) and v][:1]
    return f"{use.name} {_clip(' '.join(values), TOOL_INPUT_CHARS)}".rstrip()


def _return_code(structured: Any) -> int | None:
    code = structured.get("returnCode") if isinstance(structured, dict) else None
    return code if isinstance(code, int) else None


def outcome_line(result: ToolResultBlock | None, structured: Any = None) -> str:
    if result is None:
        return "no result"
    text = result.text()
    if result.is_error:
        return f"error: {_clip(_first_line(text), OUTCOME_CHARS) or 'no message'}"
    if text.startswith(PERSISTED_PREFIX):
        saved = re.search(r"saved to: (\S+)", text)
        return f"large output, saved to {saved.group(1)}" if saved else "large output, saved to a file"
    if text == CLEARED_TOOL_RESULT:
        return "output cleared"
    parts = []
    code = _return_code(structured)
    if code is not None:
        parts.append(f"exit {code}")
    lines = len(text.splitlines())
    if lines == 1:
        parts.append(_clip(text, ONE_LINE_CHARS))
    elif lines:
        parts.append(f"{lines} lines")
    if result.has_image():
        parts.append("an image")
    return ", ".join(parts) or "no output"


def _quoted_user(message: UserMessage) -> str | None:
    """A typed user message, verbatim (images and documents marked), or None for pure tool results."""
    pieces = [b.text for b in message.blocks() if isinstance(b, TextBlock) and b.text]
    images = sum(isinstance(b, ImageBlock) for b in message.blocks())
    if images:
        pieces.append(f"[{images} image{'s' if images > 1 else ''}]")
    if not pieces:
        return None
    return "User: " + "\n".join(pieces)


def summarize_span(entries: list[Message]) -> str:
    results: dict[str, tuple[ToolResultBlock, Any]] = {}
    for message in entries:
        if isinstance(message, UserMessage):
            for answer in message.tool_results():
                results[answer.tool_use_id] = (answer, message.tool_use_result)
    sent = [m for m in entries if isinstance(m, (UserMessage, AssistantMessage))]
    lines = [f"Earlier part of this conversation, summarized ({len(sent)} entries; tool output left out):"]
    for message in sent:
        if isinstance(message, UserMessage):
            quoted = None if message.is_meta else _quoted_user(message)
            if quoted:
                lines.append(quoted)
            continue
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                lines.append(f"Assistant: {_clip(block.text, ASSISTANT_TEXT_CHARS)}")
            elif isinstance(block, ToolUseBlock):
                result, structured = results.get(block.id, (None, None))
                lines.append(f"- {tool_call_line(block)} -> {outcome_line(result, structured)}")
    return "\n".join(lines)
