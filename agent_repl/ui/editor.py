"""/memory opens the memory files in the user's editor, which has the terminal until it exits."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from agent_repl.commands import results as r


def open_in_editor(
    request: r.EditorRequest, handed_over: Callable[[], AbstractContextManager[object]] = nullcontext
) -> r.CommandResult:
    """Run the editor on the request's files, inside `handed_over` (the full-screen app steps aside
    for it, as for `git commit`); an editor that cannot start is one error line."""
    try:
        with handed_over():
            subprocess.run([*request.command, *request.paths], check=False)
    except Exception as exc:  # no such editor, or a terminal that cannot be handed over
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return r.TextOutput(f"cannot open {request.command[0]}: {reason}", level="error")
    return request
