"""The workspace-trust question: may this folder's own settings allow things? (y trust, n or Esc not now)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_repl.core.trust import trust_question
from agent_repl.core.visible import show_controls


class TrustScreen(ModalScreen[bool]):
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
    ]

    def __init__(self, cwd: Path, rules: list[str]) -> None:
        super().__init__()
        self.cwd = cwd
        self.rules = rules
        self.options = OptionList(
            Option(Text.assemble(("y", "bold"), "  Yes, trust this folder"), id="trust"),
            Option(Text.assemble(("n", "bold"), "  No, not now: ignore its allow rules (esc)"), id="no"),
            id="trust-options",
        )

    def compose(self) -> ComposeResult:
        with Vertical(id="trust-dialog"):
            yield Static(Text("Trust this folder?", style="bold"), id="trust-title")
            yield Static(Text(show_controls(trust_question(self.cwd, self.rules))), id="trust-question")
            yield self.options

    def on_mount(self) -> None:
        self.options.highlighted = 1  # the safe answer is the default
        self.options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id == "trust")

    def action_answer(self, trusted: bool) -> None:
        self.dismiss(trusted)
