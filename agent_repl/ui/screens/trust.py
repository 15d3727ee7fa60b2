"""The workspace-trust question: may this folder's own settings apply? (y trust, n or Esc not now)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_repl.core.config.trust import trust_question
from agent_repl.ui.screens.permission import CommandPreview, CommandViewer

# Rows of the dialog besides the question and the options: border and padding (4), the title, the options' margin.
_CHROME_ROWS = 6


class TrustScreen(ModalScreen[bool]):
    """The question is laid out like a command in the permission dialog: all of it, or its start
    and its end around a count of the lines between (v reads it all), so the answers stay on screen."""

    DEFAULT_CSS = """
    TrustScreen { align: center middle; }
    #trust-dialog { width: 80%; max-width: 100; height: auto; border: thick $warning; background: $surface;
                    padding: 1 2; }
    #trust-options { height: auto; border: none; margin-top: 1; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "trust"),
        Binding("n", "answer(False)", "not now"),
        Binding("escape", "answer(False)", "not now"),
        Binding("v", "view_all", "read the whole question"),
    ]

    def __init__(self, cwd: Path, rules: list[str]) -> None:
        super().__init__()
        self.cwd = cwd
        self.rules = rules
        self.options = OptionList(
            Option(Text.assemble(("y", "bold"), "  Yes, trust this folder"), id="trust"),
            Option(Text.assemble(("n", "bold"), "  No, not now: ignore what it configures for itself (esc)"), id="no"),
            id="trust-options",
        )

    def compose(self) -> ComposeResult:
        question = trust_question(self.cwd, self.rules)
        self.question = CommandPreview(question, False, self.reserved_rows, "question", id="trust-question")
        with Vertical(id="trust-dialog"):
            yield Static(Text("Trust this folder?", style="bold"), id="trust-title")
            yield self.question
            yield self.options

    def reserved_rows(self, width: int) -> int:
        """The rows the dialog needs besides the question's lines: its frame, title and answers."""
        console = self.app.console
        return _CHROME_ROWS + sum(len(o.prompt.wrap(console, max(width - 2, 10))) for o in self.options.options
                                  if isinstance(o.prompt, Text))  # fmt: skip

    def action_view_all(self) -> None:
        self.app.push_screen(CommandViewer(self.question.command, shell=False, what="question"))

    def on_mount(self) -> None:
        self.options.highlighted = 1  # the safe answer is the default
        self.options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id == "trust")

    def action_answer(self, trusted: bool) -> None:
        self.dismiss(trusted)
