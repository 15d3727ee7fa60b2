"""The `# note` picker: which memory file the note goes to.

Returns the argument for /remember (`--project NOTE`, `--user NOTE`), so the command writes and
the picker only chooses.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static
from textual.widgets.option_list import Option

from agent_repl.commands.results import MemoryChoices
from agent_repl.ui.render import prompt_line
from agent_repl.ui.screens.option_picker import OptionPicker, ready_options


class MemoryPicker(OptionPicker):
    def __init__(self, choices: MemoryChoices) -> None:
        super().__init__()
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker-dialog"):
            yield Static(Text(f"Remember: {prompt_line(self.choices.note, 70)}", style="bold"), classes="picker-title")
            yield Static(Text("enter: save it there · esc: cancel", style="dim"), classes="picker-hint")
            options = []
            for target in self.choices.targets:
                label = Text(target.label)
                label.append(f"  {target.path}", style="dim")
                options.append(Option(label, id=f"{target.flag} {self.choices.note}"))
            yield ready_options(*options, id="memory-options")
