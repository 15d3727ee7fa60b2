"""The picker that answers a command's list of choices.

What the user picks is the argument of the command the list came from (`/resume PATH`,
`/rewind ID both`, `/snip A..B`): the command does the work, the picker only chooses.
"""

from __future__ import annotations

from datetime import datetime

from textual.screen import ModalScreen

from agent_repl.commands import results as r
from agent_repl.ui.screens.memory import MemoryPicker
from agent_repl.ui.screens.pickers import ResumePicker, SnipPicker
from agent_repl.ui.screens.rewind import RewindOptionsScreen, RewindPicker


def picker_for(result: r.CommandResult, now: datetime | None) -> tuple[str, ModalScreen[str | None]] | None:
    """The command to run with the choice and the picker to choose it in, or None (nothing to choose)."""
    if isinstance(result, r.ResumeChoices):
        return "/resume", ResumePicker(result.sessions, result.current_id, now=now)
    if isinstance(result, r.RewindChoices):
        return "/rewind", RewindPicker(result.targets)
    if isinstance(result, r.RewindOptions):
        return "/rewind", RewindOptionsScreen(result.target)
    if isinstance(result, r.SnipChoices) and result.items:
        return "/snip", SnipPicker(result.items)
    if isinstance(result, r.MemoryChoices):
        return "/remember", MemoryPicker(result)
    return None
