"""Pickers for /resume (a session of this project) and /snip (one message or a range).

Each returns the argument for the command it came from (`/resume PATH`, `/snip A..B`), so the
command does the work and the picker only chooses.
"""

from __future__ import annotations

from datetime import UTC, datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, SelectionList, Static
from textual.widgets.option_list import Option
from textual.widgets.selection_list import Selection

from agent_repl.context.snip import SnippableMessage
from agent_repl.transcript.sessions import SessionInfo
from agent_repl.ui.render import session_row, snippable_row
from agent_repl.ui.screens.option_picker import OptionPicker


class ResumePicker(OptionPicker):
    def __init__(self, sessions: list[SessionInfo], current_id: str, *, now: datetime | None = None) -> None:
        super().__init__()
        self.sessions = sessions
        self.current_id = current_id
        self.now = now or datetime.now(UTC)

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker-dialog"):
            yield Static(Text("Resume a session of this project", style="bold"), classes="picker-title")
            yield Static(
                Text(
                    "session   first prompt · last activity · messages · size   (enter: resume, esc: cancel)",
                    style="dim",
                ),
                classes="picker-hint",
            )
            options = []
            for info in self.sessions:
                ident, prompt, ago, count, size = session_row(info, self.now)
                label = Text(f"{ident}  ", style="bold")
                label.append(prompt or "(no prompt)")
                label.append(f"  · {ago} · {count} messages · {size}", style="dim")
                if info.session_id == self.current_id:
                    label.append("  (current)", style="yellow")
                options.append(Option(label, id=str(info.path)))
            if not options:
                options.append(
                    Option(Text("no sessions in this project yet", style="dim"), id="", disabled=True)
                )
            yield OptionList(*options, id="resume-options")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()


class SnipPicker(ModalScreen[str | None]):
    """Space marks messages, Enter snips from the first marked to the last marked (or the one under
    the cursor when none is marked)."""

    BINDINGS = [Binding("escape", "cancel", "cancel"), Binding("enter", "confirm", "snip", priority=True)]

    def __init__(self, items: list[SnippableMessage]) -> None:
        super().__init__(classes="picker")
        self.items = items

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker-dialog"):
            yield Static(Text("Snip messages from the model's view", style="bold"), classes="picker-title")
            yield Static(
                Text(
                    "space: mark · enter: snip the marked range · esc: cancel — snipped messages stay in "
                    "your history, marked",
                    style="dim",
                ),
                classes="picker-hint",
            )
            selections = []
            for index, item in enumerate(self.items):
                ident, role, tokens, first = snippable_row(item)
                label = Text(f"{ident:>6}  ", style="bold")
                label.append(f"{role:<9} ", style="cyan")
                label.append(f"{tokens:>7}  ", style="dim")
                label.append(first)
                selections.append(Selection(label, index))
            yield SelectionList[int](*selections, id="snip-options")
            yield Static("", id="snip-summary")

    def on_mount(self) -> None:
        options = self.query_one(SelectionList)
        if self.items:
            options.highlighted = len(self.items) - 1
        options.focus()

    def chosen_range(self) -> tuple[int, int] | None:
        options = self.query_one(SelectionList)
        marked = sorted(options.selected)
        if marked:
            return marked[0], marked[-1]
        if options.highlighted is None or not self.items:
            return None
        return options.highlighted, options.highlighted

    def on_selection_list_selection_toggled(self, event: SelectionList.SelectionToggled) -> None:
        span = self.chosen_range()
        summary = self.query_one("#snip-summary", Static)
        if span is None or not self.query_one(SelectionList).selected:
            summary.update("")
            return
        chosen = self.items[span[0] : span[1] + 1]
        tokens = sum(item.tokens for item in chosen)
        summary.update(Text(f"will snip {len(chosen)} messages, ~{tokens:,} tokens", style="yellow"))

    def action_confirm(self) -> None:
        span = self.chosen_range()
        if span is None:
            self.dismiss(None)
            return
        first, last = self.items[span[0]], self.items[span[1]]
        start = first.id or first.uuid
        end = last.id or last.uuid
        self.dismiss(start if span[0] == span[1] else f"{start}..{end}")

    def action_cancel(self) -> None:
        self.dismiss(None)
