"""TodoWrite: the model keeps a checklist of its work (Claude Code's tool, inputs and result shape)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field

from agent_repl.core.model.todos import STATUS_MARKS, TODOS_STATE_KEY, Todo, call_todos
from agent_repl.core.tooling.display import HEADLINE_WIDTH, BodyKind, ToolDisplay, plural
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, load_description
from agent_repl.tools._common import ToolArgs


class TodoWriteArgs(ToolArgs):
    todos: list[Todo] = Field(description="The whole updated todo list")


class TodoWriteDisplay(ToolDisplay):
    """A checklist, open; the headline counts the items."""

    body = BodyKind.CHECKLIST

    def headline(self, name: str, tool_input: Mapping[str, Any], width: int = HEADLINE_WIDTH) -> str:
        todos = tool_input.get("todos")
        if not isinstance(todos, list):
            return super().headline(name, tool_input, width)
        return f"{name}({len(todos)} item{'s' if len(todos) != 1 else ''})"

    def summary(self, tool_input: Mapping[str, Any], structured: Any) -> str | None:
        todos = call_todos(tool_input, structured) or []
        done = sum(1 for t in todos if t.status == "completed")
        return f"{plural(len(todos), 'todo')}, {done} done"


class TodoWrite(Tool[TodoWriteArgs]):
    name = "TodoWrite"
    display: ClassVar[ToolDisplay] = TodoWriteDisplay()
    args_model = TodoWriteArgs
    is_read_only: ClassVar[bool] = True
    description = load_description(__file__, "todo_write")

    async def run(self, args: TodoWriteArgs, ctx: ToolContext) -> ToolOutput:
        old = [dict(t) for t in ctx.state.get(TODOS_STATE_KEY) or []]
        new = [t.model_dump() for t in args.todos]
        ctx.state[TODOS_STATE_KEY] = new
        done = sum(t.status == "completed" for t in args.todos)
        doing = next((t.activeForm for t in args.todos if t.status == "in_progress"), None)
        summary = f"{done}/{len(args.todos)} done" + (f" · {STATUS_MARKS['in_progress']} {doing}" if doing else "")
        text = (
            "The todo list is updated. Keep it current as you work: mark a task in_progress before you "
            "start it and completed as soon as it is done, then go on with the next one."
        )
        return ToolOutput(content=text, structured={"oldTodos": old, "newTodos": new}, summary=summary)
