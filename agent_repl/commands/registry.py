"""The slash-command registry: typed callables that take a context and return data.

A front end parses the line, looks the command up here, awaits it and renders the result; it
never reaches into the command's work, and a command never knows how it will be drawn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_repl.bootstrap import ResumeSource
    from agent_repl.commands.results import CommandResult
    from agent_repl.context.projector import Pipeline
    from agent_repl.session import Session

SessionOpener = Callable[["ResumeSource | None", "Session"], Awaitable["Session"]]


class SessionHolder:
    """Holds the current session and swaps it for a new or resumed one (/clear, /resume).

    `opener(resume, previous)` opens the next session the way the front end opened the first
    (same approval callback, the previous session's model); the old one is closed afterwards, so
    its transcript stays complete and resumable.
    """

    def __init__(self, session: Session, opener: SessionOpener) -> None:
        self.session = session
        self._opener = opener

    async def switch(self, resume: ResumeSource | None) -> Session:
        from agent_repl.bootstrap import close_session

        previous = self.session
        self.session = await self._opener(resume, previous)
        if resume is None:
            self.session.start_source = "clear"
        await close_session(previous, "clear" if resume is None else "other")
        return self.session


@dataclass
class CommandContext:
    holder: SessionHolder
    registry: CommandRegistry
    # False in print mode (`-p "/effort low"`): a choice lasts for that run only, nothing is saved.
    interactive: bool = True

    @property
    def session(self) -> Session:
        return self.holder.session

    @property
    def pipeline(self) -> Pipeline | None:
        """The session's context pipeline; None for a session built without one."""
        from agent_repl.context.projector import Pipeline

        projector = self.session.projector
        return projector if isinstance(projector, Pipeline) else None


Handler = Callable[[CommandContext, str], Awaitable["CommandResult"]]


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    handler: Handler
    usage: str = ""
    aliases: tuple[str, ...] = ()
    # What the argument completes to in the input: "" (nothing) or "path".
    completes: str = ""


# The session's own commands by the names that reach them (agent_repl.commands.custom), read at
# each lookup so a file added during the session works at once.
CustomSource = Callable[["Session"], dict[str, "Command"]]


@dataclass
class CommandRegistry:
    commands: dict[str, Command] = field(default_factory=dict)
    _aliases: dict[str, str] = field(default_factory=dict)
    custom_source: CustomSource | None = None

    def register(self, command: Command) -> Command:
        self.commands[command.name] = command
        for alias in command.aliases:
            self._aliases[alias] = command.name
        return command

    def get(self, name: str) -> Command | None:
        name = name.lstrip("/").lower()
        return self.commands.get(self._aliases.get(name, name))

    def complete(self, prefix: str, session: Session | None = None) -> list[str]:
        """Command names (with their slash) that start with `prefix`, in registration order, then
        the session's custom commands (agent_repl.commands.custom) by name."""
        stem = prefix.lstrip("/").lower()
        names = [*self.commands, *(c.name for c in self.custom_commands(session))]
        return [f"/{name}" for name in dict.fromkeys(names) if name.startswith(stem)]

    def custom_commands(self, session: Session | None) -> list[Command]:
        """The session's custom commands that no built-in command's name hides, by name."""
        if session is None or self.custom_source is None:
            return []
        unique = {id(c): c for c in self.custom_source(session).values()}.values()
        return sorted((c for c in unique if self.get(c.name) is None), key=lambda c: c.name)

    def lookup(self, name: str, session: Session | None) -> Command | None:
        """A built-in command, else one of the session's custom commands."""
        command = self.get(name)
        if command is None and session is not None and self.custom_source is not None:
            command = self.custom_source(session).get(name.lstrip("/").lower())
        return command

    async def run(self, line: str, ctx: CommandContext) -> CommandResult:
        from agent_repl.commands.results import TextOutput  # with the commands that return results

        parsed = parse_command_line(line)
        if parsed is None:
            return TextOutput(f"not a command: {line!r}", level="error")
        name, args = parsed
        command = self.lookup(name, ctx.session)
        if command is None:
            return TextOutput(f"unknown command /{name} (try /help)", level="error")
        return await command.handler(ctx, args)


def parse_command_line(line: str) -> tuple[str, str] | None:
    """`/name args...` -> (name, args); None for a line that is not a command (or a path like /etc)."""
    text = line.strip()
    if not text.startswith("/") or len(text) < 2:
        return None
    name, _, args = text[1:].partition(" ")
    if "/" in name:
        return None
    return name.lower(), args.strip()
