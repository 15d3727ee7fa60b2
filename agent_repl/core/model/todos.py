"""The session's todo list, as Claude Code's TodoWrite keeps it: `{content, status, activeForm}` items.

The list is not stored apart from the conversation: each TodoWrite call carries the whole list,
so the current one is the last TodoWrite the history holds (ours or a resumed Claude Code
session's). Front ends show it as a checklist; a compaction re-injects it in full.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

TodoStatus = Literal["pending", "in_progress", "completed"]
TODO_TOOL = "TodoWrite"
# Where the current list lives in the session's shared tool state (TodoWrite's `oldTodos`).
TODOS_STATE_KEY = "todos"
STATUS_MARKS = {"pending": "☐", "in_progress": "◐", "completed": "☒"}


class Todo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, description="What is to be done, in the imperative (\"Run the tests\")")
    status: TodoStatus = Field(description="pending, in_progress or completed")
    activeForm: str = Field(  # noqa: N815 - Claude Code's field name
        min_length=1, description="The same task as it is being done (\"Running the tests\")"
    )


def parse_todos(raw: Any) -> list[Todo] | None:
    """The todo items of a TodoWrite input or result, or None when they do not validate."""
    if not isinstance(raw, list):
        return None
    try:
        return [Todo.model_validate(item) for item in raw]
    except ValidationError:
        return None


def call_todos(tool_input: Any, structured: Any) -> list[Todo] | None:
    """A TodoWrite call's list: the result's `newTodos` when there is one, else the input's."""
    if isinstance(structured, dict) and "newTodos" in structured:
        return parse_todos(structured["newTodos"])
    return parse_todos(tool_input.get("todos")) if hasattr(tool_input, "get") else None


def latest_todos(messages: Iterable[Any]) -> list[Todo]:
    """The list as the last successful TodoWrite left it (entries told apart by their `type`)."""
    uses: dict[str, Any] = {}
    latest: list[Todo] = []
    for message in messages:
        if message.type == "assistant":
            for block in message.content:
                if block.type == "tool_use" and block.name == TODO_TOOL:
                    uses[block.id] = block.input.get("todos")
        elif message.type == "user" and not isinstance(message.content, str):
            for block in message.content:
                if block.type != "tool_result" or block.is_error or block.tool_use_id not in uses:
                    continue
                structured = message.tool_use_result
                raw = structured.get("newTodos") if isinstance(structured, dict) else uses[block.tool_use_id]
                todos = parse_todos(raw)
                if todos is not None:
                    latest = todos
    return latest


def todo_reminder(todos: list[Todo]) -> str:
    """The list re-injected after a compaction, whole, so the plan state survives the summary."""
    if not todos:
        return ""
    lines = "\n".join(f"{i}. [{t.status}] {t.content}" for i, t in enumerate(todos, 1))
    return (
        "<system-reminder>\nYour todo list as it stood before the conversation was compacted (keep using "
        f"TodoWrite to update it):\n{lines}\n</system-reminder>"
    )
