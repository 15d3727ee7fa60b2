"""The multi-line input: Enter sends, Shift+Enter or Ctrl+J adds a line, Up/Down walk the
project's prompt history at the first/last line, Tab completes commands and paths, Shift+Tab
cycles the permission mode, and a long paste stands in as `[Pasted text #1 +60 lines]` until it
is sent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

from agent_repl.ui.completion import Completion, complete
from agent_repl.ui.pastes import PastedTexts
from agent_repl.ui.prompt_history import PromptHistory

NEWLINE_KEYS = ("shift+enter", "ctrl+j")


class PromptInput(TextArea):
    BINDINGS = [
        Binding("pageup", "page('up')", "scroll the conversation up", show=False),
        Binding("pagedown", "page('down')", "scroll the conversation down", show=False),
    ]

    class PageRequested(Message):
        """PageUp/PageDown in the input scroll the conversation."""

        def __init__(self, direction: str) -> None:
            super().__init__()
            self.direction = direction

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class ModeCycleRequested(Message):
        """Shift+Tab in the input: the next permission mode (default, acceptEdits, plan)."""

    class CompletionsShown(Message):
        """Several candidates: the app shows them under the input (empty list: hide them)."""

        def __init__(self, candidates: list[str]) -> None:
            super().__init__()
            self.candidates = candidates

    def __init__(
        self,
        *,
        cwd: Path,
        commands: Callable[[], list[str]],
        history: PromptHistory | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus", compact=True)
        self.cwd = cwd
        self.commands = commands
        self.prompt_history = history or PromptHistory()
        self.pastes = PastedTexts()

    def restore(self, text: str) -> None:
        """Put a sent prompt back (after /rewind): a long one as its paste placeholder, as if pasted again."""
        self._set_text(self.pastes.placeholder_for(text) or text)

    def _set_text(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "enter":
            event.stop()
            event.prevent_default()
            text = self.text
            self.load_text("")
            if text.strip():
                text = self.pastes.expand(text)
                self.prompt_history.append(text)
                self.post_message(self.CompletionsShown([]))
                self.post_message(self.Submitted(text))
            self.pastes.clear()
            return
        if key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if key == "shift+tab":
            event.stop()
            event.prevent_default()
            self.post_message(self.ModeCycleRequested())
            return
        if key == "tab":
            event.stop()
            event.prevent_default()
            if not self.text.strip():
                self.screen.focus_next()  # nothing to complete: Tab moves on, as usual
                return
            self.complete_at_cursor()
            return
        if key == "up" and self.cursor_location[0] == 0 and self.selection.is_empty:
            previous = self.prompt_history.previous(self.text)
            if previous is not None:
                event.stop()
                event.prevent_default()
                self._set_text(previous)
                return
        if (
            key == "down"
            and self.cursor_location[0] == self.document.line_count - 1
            and self.selection.is_empty
        ):
            following = self.prompt_history.next()
            if following is not None:
                event.stop()
                event.prevent_default()
                self._set_text(following)
                return
        await super()._on_key(event)

    async def _on_paste(self, event: events.Paste) -> None:
        placeholder = self.pastes.placeholder_for(event.text)
        if placeholder is None:
            return  # TextArea's own handler, next in line, inserts it
        event.stop()
        event.prevent_default()
        self.insert(placeholder)

    def action_page(self, direction: str) -> None:
        self.post_message(self.PageRequested(direction))

    def complete_at_cursor(self) -> Completion | None:
        row, column = self.cursor_location
        before = self.document.get_text_range((0, 0), (row, column))
        found = complete(before, self.cwd, self.commands())
        if found is None:
            self.post_message(self.CompletionsShown([]))
            return None
        start_location = _location_of(before, found.start)
        self.replace(found.replacement, start_location, (row, column))
        self.post_message(self.CompletionsShown(found.candidates if len(found.candidates) > 1 else []))
        return found


def _location_of(text: str, index: int) -> tuple[int, int]:
    head = text[:index]
    row = head.count("\n")
    return row, len(head) - (head.rfind("\n") + 1)
