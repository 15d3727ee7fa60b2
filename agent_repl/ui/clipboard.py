"""Copying text to the user's clipboard through the terminal (OSC 52), where the terminal offers it."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping

from agent_repl.commands.export import write_export
from agent_repl.commands.results import ClipboardExport, CommandResult

# Terminals known to ignore OSC 52: the Linux console and dumb terminals.
_NO_OSC52 = {"dumb", "linux", ""}


def terminal_offers_clipboard(env: Mapping[str, str] | None = None, *, is_tty: bool | None = None) -> bool:
    """Whether an OSC 52 copy can reach a clipboard: a terminal that speaks escape sequences."""
    env = os.environ if env is None else env
    if is_tty is None:
        is_tty = sys.__stdout__ is not None and sys.__stdout__.isatty()
    return is_tty and env.get("TERM", "") not in _NO_OSC52


def deliver_export(export: ClipboardExport, copy: Callable[[str], None], *, offered: bool | None = None) -> CommandResult:
    """/export with no file: copied where the terminal offers a clipboard, else written to its file."""
    if offered if offered is not None else terminal_offers_clipboard():
        copy(export.markdown)
        return export
    return write_export(export.markdown, export.fallback)
