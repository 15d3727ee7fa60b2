"""The permission prompts: Bash's keyboard-first modal (y once, a always, n deny, Esc or Ctrl+C deny
and stop the turn) here, the file-change and plan prompts in `edit_permission`; the asker that
picks between them is agent_repl.ui.permission_asker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_repl.core.model.visible import show_controls
from agent_repl.core.permissions.rules import Answer, Decision, PermissionRequest
from agent_repl.ui.command_view import (
    MAX_NOTES,
    CommandView,
    always_label,
    command_notes,
    command_view,
    model_says,
    view_text,
    wrapped,
)

# Rows of the dialog besides its parts: border and padding (4), the title, the command's margins (2).
CHROME_ROWS = 7


class CommandPreview(Widget):
    """The command, laid out by `command_view` for the width it gets and the rows the screen has
    left: all of it, or its start and its end around a count of the lines between."""

    DEFAULT_CSS = "CommandPreview { height: auto; }"

    def __init__(
        self, command: str, shell: bool, reserved: Callable[[int], int] | None, what: str = "command", **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.command = command
        self.shell = shell
        self.what = what
        self.reserved = reserved
        # Rows taken back after a layout showed the dialog taller than the screen.
        self.extra = 0
        self._cache: tuple[tuple[int, int | None], CommandView] | None = None

    def view(self, width: int) -> CommandView:
        """The layout at `width`; with no `reserved` rows to keep, every line (the viewer's)."""
        height = max(3, self.screen.size.height - self.reserved(width) - self.extra) if self.reserved else None
        key = (width, height)
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, command_view(self.command, width, height, shell=self.shell, what=self.what))
        return self._cache[1]

    def render(self) -> Text:
        # Before its first layout the widget has no width yet: lay out for the screen's.
        return view_text(self.view(self.size.width or max(20, self.app.size.width - 10)))

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.view(width).lines)


class CommandViewer(ModalScreen[None]):
    """All of a command (or of a question), every line, to scroll through (v in a dialog; Esc or q closes)."""

    BINDINGS = [Binding("escape,q,v", "dismiss", "back to the question")]

    def __init__(self, text: str, shell: bool = True, what: str = "command") -> None:
        super().__init__(classes="permission")
        self.text = text
        self.shell = shell
        self.what = what

    def compose(self) -> ComposeResult:
        lines = self.text.count("\n") + 1
        notes = command_notes(self.text, shell=self.shell)
        with Vertical(id="command-viewer"):
            yield Static(Text(f"The whole {self.what} ({lines} lines) · Esc or q: back", style="bold"))
            with VerticalScroll(id="command-viewer-lines"):
                yield CommandPreview(self.text, self.shell, None, self.what, id="command-viewer-command")
                if notes:
                    yield Static(Text("\n").join(Text(f"⚠ {note}") for note in notes), id="permission-notes")

    def on_mount(self) -> None:
        self.query_one("#command-viewer-lines").focus()


class PermissionScreen(ModalScreen[Decision | Answer]):
    BINDINGS = [
        Binding("y", "decide('allow_once')", "allow once"),
        Binding("a", "decide('allow_always')", "always allow"),
        Binding("n", "decide('deny')", "deny"),
        Binding("escape", "reject", "deny and stop the turn"),
        Binding("v", "view_all", "read the whole command"),
    ]

    def __init__(self, request: PermissionRequest) -> None:
        super().__init__(classes="permission")
        self.request = request
        self.shell = request.tool_name == "Bash"
        self.notes: list[str] = []
        self.description: list[str] = []
        self.preview = CommandPreview(request.key or "(no command)", self.shell, self.reserved_rows,
                                      id="permission-command")  # fmt: skip

    def options(self) -> list[Option]:
        request = self.request
        options = [Option(Text.assemble(("y", "bold"), "  Yes, run it once"), id=Decision.ALLOW_ONCE.value)]
        if request.always_rules:
            rules = always_label(request.always_rules, request.key)
            options.append(
                Option(
                    Text.assemble(("a", "bold"), "  Yes, and always allow ", (rules, "bold"), " in this project"),
                    id=Decision.ALLOW_ALWAYS.value,
                )
            )
        options.append(Option(Text.assemble(("n", "bold"), "  No (esc)"), id=Decision.DENY.value))
        return options

    def plan(self, width: int) -> None:
        """Share the screen's rows at a dialog content `width`: the options in full first, then at
        least three lines of the command, one note and one line of the model's words; what is left
        goes to the notes, the model's words (two lines at most) and the command, in that order."""
        free = self.app.size.height - CHROME_ROWS - 3 - sum(self._rows(o.prompt, width) for o in self.options())
        notes = command_notes(self.request.key, shell=self.shell)
        said = wrapped(model_says(self.request.description), width, 2) if self.request.description.strip() else []
        # A note and the description take their first line before either takes more.
        keep_said = 1 if said and free > (1 if notes else 0) else 0
        free -= keep_said
        shown: list[list[str]] = []
        for k, note in enumerate(notes[:MAX_NOTES]):
            last = k == len(notes) - 1
            rows = wrapped(f"⚠ {note}", width, 2)
            if not last and (k == MAX_NOTES - 1 or len(rows) + 1 > free):
                shown.append(wrapped(f"⚠ {len(notes) - k} more risks: v shows them all", width, 1))
                free -= 1
                break
            shown.append(rows)
            free -= len(rows)
        self.notes = ["\n".join(rows) for rows in shown]
        self.description = said[: keep_said + max(0, min(len(said) - keep_said, free))]

    def _rows(self, prompt: Any, width: int) -> int:
        """The rows an option's prompt takes in the option list at the dialog's content `width`."""
        text = prompt if isinstance(prompt, Text) else Text(str(prompt))
        return len(text.wrap(self.app.console, max(width - 2, 10)))

    def _width(self) -> int:
        """The dialog's content width: as laid out, or before that as app.tcss sizes it."""
        dialog = self.query("#permission-dialog")
        if dialog and dialog.first().size.width:
            return dialog.first().size.width
        return min(self.app.size.width * 4 // 5, 100) - 6

    def compose(self) -> ComposeResult:
        self.plan(self._width())
        with Vertical(id="permission-dialog"):
            yield Static(Text(f"Allow {show_controls(self.request.tool_name)}?", style="bold"), id="permission-title")
            # The whole command, every character visible: the dialog never shows less than runs.
            yield self.preview
            yield Static(Text("\n".join(self.notes)), id="permission-notes")
            yield Static(Text("\n".join(self.description), style="dim"), id="permission-description")
            yield OptionList(*self.options(), id="permission-options")

    def _show_parts(self) -> None:
        for selector, text, style in (("#permission-notes", "\n".join(self.notes), ""),
                                      ("#permission-description", "\n".join(self.description), "dim")):  # fmt: skip
            part = self.query_one(selector, Static)
            part.update(Text(text, style=style))
            part.display = bool(text)

    def reserved_rows(self, width: int) -> int:
        """The rows the dialog needs besides the command's lines, at a command width of `width`."""
        inner = width + 2  # the command box's own padding
        rows = CHROME_ROWS + sum(note.count("\n") + 1 for note in self.notes) + len(self.description)
        rows += sum(self._rows(option.prompt, inner) for option in self.options())
        return rows

    def on_mount(self) -> None:
        self._show_parts()
        self.query_one(OptionList).highlighted = 0
        self.query_one(OptionList).focus()
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.preview.extra = 0
        self.call_after_refresh(self._fit, replan=True)

    def _fit(self, replan: bool = True) -> None:
        """Once laid out: plan again at the real width, then, while the dialog is taller than the
        screen, take rows from the command (down to three lines), then the model's words, then the notes."""
        if not self.query("#permission-dialog"):
            return  # answered and taken down before the layout came round (a quick y or n)
        if replan:
            self.plan(self._width())
            self._show_parts()
            self.preview.refresh(layout=True)
            self.call_after_refresh(self._fit, replan=False)
            return
        over = self.query_one("#permission-dialog").outer_size.height - self.size.height
        if over <= 0:
            return
        before = len(self.description) + sum(note.count("\n") + 1 for note in self.notes)
        if self.preview.size.height > 3:
            self.preview.extra += min(over, self.preview.size.height - 3)
        elif self.description:
            self.description = self.description[:-1]
        elif len(self.notes) > 1:
            self.notes = [*self.notes[:-2], "⚠ more risks: v shows them all"]
        else:
            return
        # Rows taken from the notes or the model's words are not given back to the command.
        self.preview.extra += before - len(self.description) - sum(note.count("\n") + 1 for note in self.notes)
        self._show_parts()
        self.preview.refresh(layout=True)
        self.call_after_refresh(self._fit, replan=False)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:  # every option is made with its decision as its id
            self.dismiss(Decision(event.option.id))

    def action_decide(self, value: str) -> None:
        if value == Decision.ALLOW_ALWAYS.value and self.request.always_rule() is None:
            return  # nothing can be saved for this command: the choice is not offered
        self.dismiss(Decision(value))

    def action_reject(self) -> None:
        self.dismiss(Answer(Decision.DENY, interrupt=True))

    def action_view_all(self) -> None:
        self.app.push_screen(CommandViewer(self.request.key, self.shell))
