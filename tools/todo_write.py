"""TodoWrite: the model keeps a checklist of its work (Claude Code's tool, inputs and result shape)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from agent_repl.core.model.todos import STATUS_MARKS, TODOS_STATE_KEY, Todo
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, load_description
from agent_repl.tools._common import ToolArgs


class TodoWriteArgs(ToolArgs):
    todos: list[Todo] = Field(description="The whole updated todo list")


class TodoWrite(Tool[TodoWriteArgs]):
    name: ClassVar[str] = "TodoWrite"
    args_model = TodoWriteArgs
    is_read_only: ClassVar[bool] = True
    description: ClassVar[str] = load_description(__file__, "todo_write")

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
