"""The /rewind pickers: which prompt to go back to, then what to restore (code, conversation, both).

Each returns the argument for the command (`/rewind ID`, `/rewind ID both`), so the command does
the work and the pickers only choose.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_repl.context.rewind import BASH_NOT_TRACKED, RewindTarget
from agent_repl.ui.render import prompt_line, rewind_files_note


class RewindPicker(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, targets: list[RewindTarget]) -> None:
        super().__init__(classes="picker")
        self.targets = targets

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker-dialog"):
            yield Static(Text("Rewind to just before a prompt", style="bold"), classes="picker-title")
            yield Static(
                Text("enter: choose · esc: cancel — the code, the conversation or both go back", style="dim"),
                classes="picker-hint",
            )
            options = []
            for number, target in enumerate(self.targets, 1):
                label = Text(f"{number:>3}  ", style="bold")
                label.append(prompt_line(target.text))
                label.append(f"  · {rewind_files_note(target)}", style="dim")
                options.append(Option(label, id=target.uuid))
            if not options:
                options.append(Option(Text("no prompt to rewind to yet", style="dim"), id="", disabled=True))
            yield OptionList(*options, id="rewind-options")

    def on_mount(self) -> None:
        # Children composed inside a container may mount after the screen does: wait for a refresh.
        self.call_after_refresh(self._focus_options)

    def _focus_options(self) -> None:
        options = self.query_one(OptionList)
        if self.targets:
            options.highlighted = len(self.targets) - 1
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class RewindOptionsScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, target: RewindTarget) -> None:
        super().__init__(classes="picker")
        self.target = target

    def compose(self) -> ComposeResult:
        target = self.target
        with Vertical(id="permission-dialog"):
            yield Static(Text(f"Rewind to before: {prompt_line(target.text, 70)}", style="bold"))
            yield Static(Text(rewind_files_note(target), style="dim"))
            if target.ran_bash:
                yield Static(Text(BASH_NOT_TRACKED, style="yellow"), id="rewind-bash-note")
            choices = [("both", "Restore code and conversation"), ("conversation", "Restore conversation"), ("code", "Restore code")]
            yield OptionList(
                *(Option(label, id=f"{target.uuid} {what}") for what, label in choices),
                Option("Never mind", id=""),
                id="rewind-what",
            )

    def on_mount(self) -> None:
        self.call_after_refresh(self._focus_options)

    def _focus_options(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
