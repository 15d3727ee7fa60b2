"""What a typed line asks for, decided once for every front end (docs/architecture.md 2).

A line is a slash command (`/name args`), the user's own shell command (`!command`), a note for a
memory file (`# note`), or a prompt for the model. `submit` only classifies: the app, the line REPL
and print mode each act on the answer (print mode has no shell and no picker, so it sends a
`!command` or a `# note` to the model as it is, and a slash word no command knows as well).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_repl.commands.registry import Command, CommandRegistry, parse_command_line
from agent_repl.commands.remember import memory_note

if TYPE_CHECKING:
    from agent_repl.core.model.events import AgentEvent
    from agent_repl.session import Session


@dataclass(frozen=True)
class CommandLine:
    """`/name args`; `command` is None for a name the registry does not know."""

    line: str
    name: str
    args: str
    command: Command | None


@dataclass(frozen=True)
class ShellLine:
    """`!command`: run through the Bash tool, kept in the conversation."""

    line: str
    command: str


@dataclass(frozen=True)
class MemoryNoteLine:
    """`# note`: a line for a memory file (`/remember note` asks which one)."""

    line: str
    note: str

    @property
    def remember(self) -> str:
        return f"/remember {self.note}"


@dataclass(frozen=True)
class PromptLine:
    """Anything else: a prompt for the model (with its `@path` mentions)."""

    line: str


Submission = CommandLine | ShellLine | MemoryNoteLine | PromptLine


def shell_command(line: str) -> str | None:
    """The command of a `!command` line, else None (a lone `!` is a prompt)."""
    text = line.strip()
    return text[1:].strip() or None if text.startswith("!") else None


def submit(line: str, registry: CommandRegistry, session: Session | None = None) -> Submission:
    """What `line` asks for, in this order: a slash command (built in, or one of the session's
    custom commands), a shell command, a memory note, a prompt."""
    parsed = parse_command_line(line)
    if parsed is not None:
        name, args = parsed
        return CommandLine(line, name, args, registry.lookup(name, session))
    if (command := shell_command(line)) is not None:
        return ShellLine(line, command)
    if (note := memory_note(line)) is not None:
        return MemoryNoteLine(line, note)
    return PromptLine(line)


def turn_events(
    session: Session, submission: ShellLine | PromptLine, *, max_turns: int | None = None
) -> AsyncIterator[AgentEvent]:
    """The events of the turn a shell line or a prompt starts."""
    if isinstance(submission, ShellLine):
        return session.run_shell(submission.command)
    return session.run_turn(submission.line, max_turns=max_turns)
