"""/add-dir PATH: one more working directory for the session (Session.add_directory, which
`--add-dir` uses at start too)."""

from __future__ import annotations

from pathlib import Path

from agent_repl.commands.registry import CommandContext
from agent_repl.commands.results import CommandResult, TextOutput


async def add_dir_command(ctx: CommandContext, args: str) -> CommandResult:
    """/add-dir PATH: the tools may read and edit there too for the rest of the session."""
    name = args.strip()
    if not name:
        return TextOutput("usage: /add-dir PATH", level="error")
    path = Path(name).expanduser()
    if not path.is_absolute():
        path = ctx.session.cwd / path
    if not path.exists():
        return TextOutput(f"{path} does not exist", level="error")
    try:
        added = ctx.session.add_directory(path)
    except NotADirectoryError:
        return TextOutput(f"{path} is not a directory", level="error")
    return TextOutput(
        f"Added {added} as a working directory for this session: reads and edits there are treated as in the "
        "project, and sandboxed commands may write there."
    )
