"""What the pickers share: a modal list whose chosen option's id is the answer, Esc for none."""

from __future__ import annotations

from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option


def ready_options(*options: Option, id: str, highlighted: int | None = 0) -> OptionList:
    """An option list with its cursor already on `highlighted` before it is first drawn.

    The cursor is never moved after the list shows (a later move would undo a key the user
    pressed once it showed); the screens focus it through AUTO_FOCUS, before their first paint.
    """
    options_list = OptionList(*options, id=id)
    options_list.highlighted = highlighted
    return options_list


class OptionPicker(ModalScreen[str | None]):
    """Enter on an option answers its id ("" answers None); Esc answers None."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]
    AUTO_FOCUS = "OptionList"

    def __init__(self) -> None:
        super().__init__(classes="picker")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
