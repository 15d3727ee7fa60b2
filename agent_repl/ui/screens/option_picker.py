"""What the pickers share: a modal list whose chosen option's id is the answer, Esc for none."""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.widgets import OptionList


def focus_options_once_mounted(screen: Screen[Any], highlighted: int | None = 0) -> None:
    """Focus the screen's option list with `highlighted` under the cursor; children composed inside
    a container may mount after the screen does, so this waits for a refresh."""

    def focus() -> None:
        options = screen.query_one(OptionList)
        if screen.focused is not None and screen.focused is not options:
            return  # a key already moved the focus on (n opens the feedback line): leave it there
        if highlighted is not None:
            options.highlighted = highlighted
        options.focus()

    screen.call_after_refresh(focus)


class OptionPicker(ModalScreen[str | None]):
    """Enter on an option answers its id ("" answers None); Esc answers None."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self) -> None:
        super().__init__(classes="picker")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
