"""Helpers for driving the app in tests: bounded waits and hand-built histories."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from agent_repl.core.model.messages import (
    AssistantMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)


async def wait_for(
    pilot: Pilot, condition: Callable[[], Any], *, limit_s: float = 60.0, what: str = ""
) -> Any:
    """Let the app run until `condition()` is truthy; fail after `limit_s` seconds (never asserted as a time)."""
    steps = int(limit_s / 0.02)
    for _ in range(steps):
        value = condition()
        if value:
            return value
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting for {what or condition}")


def names(messages: list[Any]) -> list[str]:
    return [type(m).__name__ for m in messages]


def event_kinds(messages: list[Any]) -> list[str]:
    return [m.event.kind for m in messages if type(m).__name__ == "AgentEventPosted"]


STAMP = "2026-01-01T12:00:00.000Z"


def user(uuid: str, text: str, **extra: Any) -> UserMessage:
    return UserMessage(uuid=uuid, content=text, timestamp=STAMP, **extra)


def assistant(
    uuid: str, text: str, *, message_id: str = "msg_1", usage: Usage | None = None
) -> AssistantMessage:
    return AssistantMessage(
        uuid=uuid,
        message_id=message_id,
        model="claude-sonnet-5-5",
        content=[TextBlock(text=text)],
        usage=usage,
        timestamp=STAMP,
    )


def tool_use(
    uuid: str, tool_id: str, name: str, tool_input: dict, *, message_id: str = "msg_1"
) -> AssistantMessage:
    return AssistantMessage(
        uuid=uuid,
        message_id=message_id,
        model="claude-sonnet-5-5",
        content=[ToolUseBlock(id=tool_id, name=name, input=tool_input)],
        timestamp=STAMP,
    )


def tool_result(
    uuid: str, tool_id: str, text: str, *, is_error: bool = False, structured: Any = None
) -> UserMessage:
    return UserMessage(
        uuid=uuid,
        content=[ToolResultBlock(tool_use_id=tool_id, content=text, is_error=is_error)],
        tool_use_result=structured,
        source_tool_use_id=tool_id,
        timestamp=STAMP,
    )


def compact_boundary(uuid: str, pre_tokens: int, trigger: str = "manual") -> SystemMessage:
    return SystemMessage(
        uuid=uuid,
        subtype="compact_boundary",
        content="Conversation compacted",
        metadata={"trigger": trigger, "preTokens": pre_tokens},
        timestamp=STAMP,
    )


def long_history(pairs: int) -> list[Any]:
    """`pairs` exchanges of a prompt and a two-line answer, with every fifth answer using a tool."""
    history: list[Any] = [user("meta-0", "Today's date: 2026-01-01", is_meta=True)]
    for n in range(pairs):
        history.append(user(f"u-{n}", f"question number {n}"))
        if n % 5 == 0:
            history.append(
                tool_use(
                    f"t-{n}", f"toolu_{n}", "Read", {"file_path": f"/src/file_{n}.py"}, message_id=f"m{n}"
                )
            )
            history.append(tool_result(f"r-{n}", f"toolu_{n}", f"1\tline of file {n}"))
        history.append(
            assistant(
                f"a-{n}",
                f"Answer number {n}.\nIt has two lines.",
                message_id=f"m{n}b",
                usage=Usage(input_tokens=10, output_tokens=5),
            )
        )
    return history
