"""The todo list as a live checklist above the input, while it has work left."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from agent_repl.ui.tool_views import render_checklist

if TYPE_CHECKING:
    from agent_repl.core.model.todos import Todo


class TodoPanel(Static):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.todos: list[Todo] = []
        self.display = False

    def show(self, todos: list[Todo]) -> None:
        """Show the list; hide it when it is empty or every item is done."""
        self.todos = list(todos)
        self.display = any(t.status != "completed" for t in self.todos)
        if self.display:
            done = sum(t.status == "completed" for t in self.todos)
            head = Text(f"Todos {done}/{len(self.todos)}\n", style="bold")
            self.update(Text.assemble(head, render_checklist(self.todos)))
