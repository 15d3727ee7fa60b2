"""Small facts about a session's history that the status line needs (no UI library)."""

from __future__ import annotations

from agent_repl.core.messages import AssistantMessage, Message, Usage


def last_request_usage(messages: list[Message]) -> Usage | None:
    """The usage the API reported for the newest real response, or None before the first one."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.usage is not None and not message.is_synthetic:
            return message.usage
    return None
