"""A tool call as a collapsible block: the call on the title line, then its input and its result
(or the persisted-output preview, with `o` to open the full file)."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.markup import escape
from textual.message import Message
from textual.widgets import Collapsible, Static

from agent_repl.ui.history_view import ToolItem
from agent_repl.ui.tool_views import tool_body

# Tools whose body (a diff, a checklist, a plan) is the point: their blocks open expanded.
OPEN_BY_DEFAULT = frozenset({"Edit", "Write", "MultiEdit", "TodoWrite", "ExitPlanMode"})

RESULT_PREVIEW_LINES = 30
MARK_LABELS = {"snipped": "✂ snipped", "collapsed": "⊟ collapsed"}


def _result_preview(text: str) -> str:
    lines = text.splitlines()
    if len(lines) <= RESULT_PREVIEW_LINES:
        return text
    return "\n".join(lines[:RESULT_PREVIEW_LINES]) + f"\n… {len(lines) - RESULT_PREVIEW_LINES} more lines"


class ToolBlock(Collapsible):
    BINDINGS = [Binding("o", "open_output", "open full output", show=False)]

    class OpenOutput(Message):
        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    def __init__(self, item: ToolItem) -> None:
        self.item = item
        self.mark: str | None = None
        self.progress = ""
        self._input_view = Static(classes="tool-input")
        self._result_view = Static(classes="tool-result")
        self._persisted_view = Static(classes="tool-persisted")
        super().__init__(
            self._input_view,
            self._result_view,
            self._persisted_view,
            title=self._title_text(),
            collapsed=item.name not in OPEN_BY_DEFAULT,
            classes="tool",
        )
        self._fill()

    def _title_text(self) -> str:
        item = self.item
        if item.result is None:
            marker, status = "[yellow]●[/]", f" [dim]{escape(self.progress or 'running…')}[/]"
        elif item.is_error:
            marker, status = "[red]●[/]", f" [red]{escape(item.summary[:80])}[/]"
        else:
            marker, status = "[green]●[/]", f" [dim]{escape(item.summary[:80])}[/]"
        if item.persisted_path:
            status += f" [dim]· output saved ({escape(item.persisted_size or '?')}), o to open[/]"
        if self.mark:
            status += f" [yellow]{MARK_LABELS[self.mark]}[/]"
        return f"{marker} [b]{escape(item.headline())}[/]{status}"

    def _fill(self) -> None:
        item = self.item
        body = tool_body(item.name, item.input, item.structured)
        self._input_view.update(body if body is not None else Text(item.input_text(), style="dim"))
        if item.result is None:
            self._result_view.update(Text(self.progress or "running…", style="dim italic"))
            self._result_view.display = True
        else:
            self._result_view.update(Text(_result_preview(item.result), style="red" if item.is_error else ""))
            # A diff or a checklist says it all; their result text only matters when it is an error.
            self._result_view.display = body is None or item.is_error
        if item.persisted_path:
            note = Text("full output: ", style="bold")
            note.append(item.persisted_path)
            note.append(f" ({item.persisted_size or '?'}) · press o to open it", style="dim")
            self._persisted_view.update(note)
            self._persisted_view.display = True
        else:
            self._persisted_view.display = False

    def refresh_item(self) -> None:
        self.title = self._title_text()
        self._fill()

    def set_progress(self, text: str) -> None:
        self.progress = text.strip().splitlines()[-1][:100] if text.strip() else ""
        self.title = self._title_text()

    def set_mark(self, mark: str | None) -> None:
        if mark != self.mark:
            self.mark = mark
            self.set_class(mark == "snipped", "-snipped")
            self.set_class(mark == "collapsed", "-in-collapse")
            self.title = self._title_text()

    def action_open_output(self) -> None:
        if self.item.persisted_path:
            self.post_message(self.OpenOutput(self.item.persisted_path))
