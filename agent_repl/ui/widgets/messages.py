"""One widget per kind of history item: the user's prompt, the assistant's markdown, notices,
and the output of a slash command."""

from __future__ import annotations

from rich.console import RenderableType
from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual.binding import Binding
from textual.widgets import Static

from agent_repl.core.model.visible import show_controls
from agent_repl.ui.history_view import (
    THINKING_COLLAPSED_LINES,
    AssistantItem,
    CommandItem,
    NoticeItem,
    ThinkingItem,
    UserItem,
)
from agent_repl.ui.tool_render import terminal_output
from agent_repl.ui.widgets.fresh_size import FreshStatic

MARK_LABELS = {
    "snipped": "✂ snipped from the model's view",
    "collapsed": "⊟ collapsed into a summary in the model's view",
    "rewound": "↶ rewound: no longer in the model's view",
}


class UserMessageView(Static):
    """The prompt as typed, with the `[id:…]` tag the user and the model use to name it."""

    def __init__(self, item: UserItem) -> None:
        super().__init__(classes="message user")
        self.item = item
        self.mark: str | None = None
        self.update(self._render_item())

    def _render_item(self) -> Text:
        text = Text()
        text.append("› ", style="bold")
        text.append(show_controls(self.item.text))
        text.append(f"  [id:{self.item.tag}]", style="dim")
        if self.mark:
            text.append(f"  {MARK_LABELS[self.mark]}", style="yellow")
        return text

    def set_mark(self, mark: str | None) -> None:
        if mark != self.mark:
            self.mark = mark
            self.set_class(mark in ("snipped", "rewound"), "-snipped")
            self.set_class(mark == "collapsed", "-in-collapse")
            self.update(self._render_item())


class AssistantMessageView(Static):
    """A finished reply, as one widget drawing rich's markdown (long histories mount hundreds)."""

    def __init__(self, item: AssistantItem) -> None:
        super().__init__(RichMarkdown(show_controls(item.text)), classes="message assistant")
        self.item = item
        self.mark: str | None = None

    @property
    def source(self) -> str:
        return self.item.text

    def set_mark(self, mark: str | None) -> None:
        if mark != self.mark:
            self.mark = mark
            self.set_class(mark in ("snipped", "rewound"), "-snipped")
            self.set_class(mark == "collapsed", "-in-collapse")
            self.border_title = MARK_LABELS[mark] if mark else None


class ThinkingView(Static):
    """The model's thinking, dimmed; a long one shows its first lines until opened (a click, or Enter
    when Tab has reached it, as a tool block opens) and folds back the same way."""

    BINDINGS = [Binding("enter", "fold", "open or fold the thought", show=False)]

    def __init__(self, item: ThinkingItem) -> None:
        super().__init__(classes="message thinking")
        self.item = item
        self.mark: str | None = None
        self.can_focus = item.collapsible
        self.refresh_item()

    def refresh_item(self) -> None:
        lines = show_controls(self.item.text.strip("\n")).split("\n")
        folded = self.item.collapsible and not self.item.expanded
        shown = lines[:THINKING_COLLAPSED_LINES] if folded else lines
        text = Text("✻ ", style="dim")
        text.append("\n  ".join(shown), style="dim italic")
        if folded:
            text.append(f"\n  … +{len(lines) - len(shown)} lines (click or Enter to open)", style="dim")
        elif self.item.collapsible:
            text.append("\n  (click or Enter to fold)", style="dim")
        self.update(text)

    # Not `action_toggle`: every Textual node already has one (it flips a named attribute).
    def action_fold(self) -> None:
        if self.item.collapsible:
            self.item.expanded = not self.item.expanded
            self.refresh_item()

    def on_click(self) -> None:
        self.action_fold()

    def set_mark(self, mark: str | None) -> None:
        if mark != self.mark:
            self.mark = mark
            self.set_class(mark in ("snipped", "rewound"), "-snipped")
            self.set_class(mark == "collapsed", "-in-collapse")


class StreamingThinkingView(Static):
    """Thinking as it streams, dimmed, its last lines only, each on one row; the finished thought
    takes its place. Its height changes only while it has fewer lines than it shows, so a chunk
    lays out the conversation only then."""

    def __init__(self) -> None:
        super().__init__(classes="message thinking streaming")
        self.text = ""
        self.rows = 0

    def add(self, text: str) -> None:
        self.text += text
        lines = show_controls(self.text.strip("\n")).split("\n")[-THINKING_COLLAPSED_LINES:]
        shown = Text("✻ ", style="dim", no_wrap=True, overflow="ellipsis")
        shown.append("\n  ".join(lines), style="dim italic")
        rows, self.rows = self.rows, len(lines)
        self.update(shown, layout=rows != self.rows)


class NoticeView(Static):
    def __init__(self, item: NoticeItem) -> None:
        super().__init__(Text(show_controls(item.text)), classes=f"notice -{item.level}")
        self.item = item

    def set_mark(self, mark: str | None) -> None:
        self.set_class(mark in ("snipped", "rewound"), "-snipped")


class LocalCommandView(FreshStatic):
    """A slash command of a Claude Code session, `/name args` on the border, its output inside."""

    def __init__(self, item: CommandItem) -> None:
        super().__init__(classes="command-output local-command")
        self.item = item
        self.border_title = show_controls(item.command, newlines=False)
        self.refresh_item()

    def refresh_item(self) -> None:
        output = self.item.output
        # A command that only expanded into a prompt has no output: it reads as the line typed.
        self.set_class(output is None, "-prompt-only")
        if output is None:
            self.update(Text("› " + show_controls(self.item.command, newlines=False), style="bold"))
        else:
            text = terminal_output(output.strip("\n"))
            if self.item.is_error:
                text.stylize("red")
            self.update(text)

    def set_mark(self, mark: str | None) -> None:
        self.set_class(mark == "snipped", "-snipped")


class CommandOutput(Static):
    """What a slash command returned, drawn by `agent_repl.ui.render`."""

    def __init__(self, command: str, renderable: RenderableType) -> None:
        super().__init__(renderable, classes="command-output")
        self.command = command
        self.border_title = command
