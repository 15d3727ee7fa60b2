"""The /rewind pickers: which prompt to go back to, then what to restore (code, conversation, both).

Each returns the argument for the command (`/rewind ID`, `/rewind ID both`), so the command does
the work and the pickers only choose.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static
from textual.widgets.option_list import Option

from agent_repl.context.rewind import BASH_NOT_TRACKED, RewindTarget
from agent_repl.ui.render import prompt_line, rewind_files_note
from agent_repl.ui.screens.option_picker import OptionPicker, ready_options


class RewindPicker(OptionPicker):
    def __init__(self, targets: list[RewindTarget]) -> None:
        super().__init__()
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
            yield ready_options(*options, id="rewind-options", highlighted=len(self.targets) - 1 if self.targets else None)


class RewindOptionsScreen(OptionPicker):
    def __init__(self, target: RewindTarget) -> None:
        super().__init__()
        self.target = target

    def compose(self) -> ComposeResult:
        target = self.target
        with Vertical(id="permission-dialog"):
            yield Static(Text(f"Rewind to before: {prompt_line(target.text, 70)}", style="bold"))
            yield Static(Text(rewind_files_note(target), style="dim"))
            if target.ran_bash:
                yield Static(Text(BASH_NOT_TRACKED, style="yellow"), id="rewind-bash-note")
            choices = [("both", "Restore code and conversation"), ("conversation", "Restore conversation"), ("code", "Restore code")]
            yield ready_options(
                *(Option(label, id=f"{target.uuid} {what}") for what, label in choices),
                Option("Never mind", id=""),
                id="rewind-what",
            )
