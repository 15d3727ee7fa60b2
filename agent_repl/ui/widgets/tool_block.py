"""A tool call as a collapsible block: the call on the title line, then what `tool_render` draws for
it (input and result, a diff, a checklist, a sub-task), and the persisted-output note with `o`."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message

from agent_repl.core.model.messages import AssistantMessage, UserMessage
from agent_repl.ui import tool_render
from agent_repl.ui.history_view import ToolItem
from agent_repl.ui.widgets.fresh_size import FreshCollapsible, FreshStatic

MARK_LABELS = {"snipped": "✂ snipped", "collapsed": "⊟ collapsed", "rewound": "↶ rewound"}


class ToolBlock(FreshCollapsible):
    BINDINGS = [Binding("o", "open_output", "open full output", show=False)]

    class OpenOutput(Message):
        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    def __init__(self, item: ToolItem) -> None:
        self.item = item
        self.mark: str | None = None
        # The body is drawn when the block is open: a collapsed one draws it when first opened.
        self._body_stale = True
        self._body_view = FreshStatic(classes="tool-body")
        self._persisted_view = FreshStatic(classes="tool-persisted")
        super().__init__(
            self._body_view,
            self._persisted_view,
            # Textual annotates Collapsible's title as str, but hands it to a label that takes rich Text.
            title=self._title_text(),  # type: ignore[arg-type]
            collapsed=not tool_render.opens_expanded(item.call),
            classes="tool",
        )
        self._fill()

    def _title_text(self) -> Text:
        item = self.item
        text = tool_render.header(item.call)
        if item.persisted_path:
            text.append(f" · output saved ({item.persisted_size or '?'}), o to open", style="dim")
        if self.mark:
            text.append(f" {MARK_LABELS[self.mark]}", style="yellow")
        return text

    def _show_title(self) -> None:
        # As in __init__: the title reactive is annotated str, and a rich Text is what its label takes.
        self.title = self._title_text()  # type: ignore[assignment]

    def watch_collapsed(self, collapsed: bool) -> None:
        if not collapsed and self._body_stale:
            self._fill()

    def _fill(self) -> None:
        item = self.item
        self._body_stale = self.collapsed
        if not self._body_stale:
            self._body_view.update(tool_render.body(item.call))
        if item.persisted_path:
            note = Text("full output: ", style="bold")
            note.append(tool_render.one_line(item.persisted_path, 200))
            note.append(f" ({item.persisted_size or '?'}) · press o to open it", style="dim")
            self._persisted_view.update(note)
            self._persisted_view.display = True
        else:
            self._persisted_view.display = False

    def refresh_item(self) -> None:
        self._show_title()
        self.collapsed = self.collapsed and not tool_render.opens_expanded(self.item.call)
        self._fill()

    def set_progress(self, text: str) -> None:
        self.item.call.progress = text.strip().splitlines()[-1][:100] if text.strip() else ""
        self._show_title()

    def add_step(self, message: AssistantMessage | UserMessage) -> None:
        """A Task call's sub-agent made a tool call or got its result."""
        if tool_render.add_step(self.item.call, message) is not None:
            self._show_title()
            self._fill()

    def set_mark(self, mark: str | None) -> None:
        if mark != self.mark:
            self.mark = mark
            self.set_class(mark in ("snipped", "rewound"), "-snipped")
            self.set_class(mark == "collapsed", "-in-collapse")
            self._show_title()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Without a saved output, `o` is just a letter (typed into the input).
        return bool(self.item.persisted_path) if action == "open_output" else True

    def action_open_output(self) -> None:
        if self.item.persisted_path:
            self.post_message(self.OpenOutput(self.item.persisted_path))
