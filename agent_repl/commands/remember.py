"""`# note` and /remember: a line added to a memory file the user picks.

A prompt that starts with `#` is not sent to the model: the front end asks which memory file
the line belongs in (the project's, which everyone working here shares, or the user's own, which
every project reads) and runs `/remember --project NOTE` or `/remember --user NOTE`. The line is
appended as a Markdown list item; the model hears of it at once through a meta message, and every
later session reads it with the file.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent_repl.commands.project import memory_files
from agent_repl.commands.registry import CommandContext
from agent_repl.commands.results import CommandResult, MemoryChoices, MemoryTarget, TextOutput
from agent_repl.core.api.system_prompt import PROJECT_INSTRUCTION_FILES
from agent_repl.core.model.messages import UserMessage

PROJECT_FLAG = "--project"
USER_FLAG = "--user"


def memory_note(line: str) -> str | None:
    """The note of a `# note` line, or None when the line is not one (a Markdown heading such as
    `## Plan`, `#!` or a pasted Markdown document of several lines is a prompt like any other)."""
    text = line.strip()
    if not text.startswith("#") or text.startswith(("##", "#!")) or "\n" in text:
        return None
    return text[1:].strip() or None


def memory_targets(cwd: Path, home: Path) -> list[MemoryTarget]:
    project = (memory_files(cwd) or [cwd / PROJECT_INSTRUCTION_FILES[0]])[0]
    return [
        MemoryTarget(PROJECT_FLAG, "Project memory (shared by everyone working here)", str(project)),
        MemoryTarget(USER_FLAG, "User memory (read in every project)", str(home / "AGENTS.md")),
    ]


def append_note(path: Path, note: str) -> None:
    """Append `- note` to `path` (created with its folder when missing), on a line of its own."""
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = path.read_bytes() if path.is_file() else b""
    prefix = b"" if not existing or existing.endswith(b"\n") else b"\n"
    with open(path, "ab") as out:
        out.write(prefix + f"- {note}\n".encode())
        out.flush()
        os.fsync(out.fileno())


async def remember_command(ctx: CommandContext, args: str) -> CommandResult:
    session = ctx.session
    targets = memory_targets(session.cwd, session.settings.home)
    flag, _, rest = args.strip().partition(" ")
    target = next((t for t in targets if t.flag == flag), None)
    note = rest.strip() if target else args.strip()
    if not note:
        return TextOutput("nothing to remember: write the note after # (e.g. `# run tests with make test`)", level="error")
    if target is None:
        return MemoryChoices(note=note, targets=targets)
    path = Path(target.path)
    if os.path.lexists(path) and not path.is_file():
        return TextOutput(f"cannot write {path}: it is not a regular file", level="error")
    try:
        append_note(path, " ".join(note.split()))
    except OSError as exc:
        return TextOutput(f"cannot write {target.path}: {exc.strerror or exc}", level="error")
    await session.append(
        UserMessage(content=f"<system-reminder>\nThe user added to {target.path}: {note}\n</system-reminder>", is_meta=True)
    )
    return TextOutput(f"Saved to {target.path}")
