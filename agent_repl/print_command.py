"""A slash command given to print mode (`-p "/context"`): which prompts run as a command, and the
command's output as plain text for the text, json and stream-json formats.

A prompt runs as a command when its first word names a command the registry knows; any other
slash word goes to the model as the prompt, as Claude Code sends it. Commands that only make
sense on a screen (switching sessions, opening an editor, leaving) answer with an error instead
of doing half of their work.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_repl.commands import CommandContext, SessionHolder, default_registry
from agent_repl.commands.registry import Command, CommandRegistry
from agent_repl.commands.results import CommandResult, CompactDone, ContextView, PromptRequest, TextOutput
from agent_repl.commands.submit import CommandLine, submit
from agent_repl.core.model.messages import SystemMessage

if TYPE_CHECKING:
    from agent_repl.session import Session

# Commands that need the interactive app: they switch or end the session, or open an editor.
INTERACTIVE_ONLY = frozenset({"clear", "resume", "exit", "memory"})
# The width plain-text reports are laid out at (tables, the /context grid).
TEXT_WIDTH = 100


@dataclass
class CommandOutcome:
    name: str
    args: str
    text: str
    is_error: bool = False
    # A prompt the command hands to the model (/init); None when the command's output is all.
    prompt: str | None = None
    # Compact boundaries the command added to the history (stream-json prints them).
    boundaries: list[SystemMessage] = field(default_factory=list)
    # For /context: the categories as data (stream-json's `context_usage`).
    context_usage: dict[str, Any] | None = None


@dataclass
class LocalCommand:
    command: Command
    registry: CommandRegistry
    args: str = ""

    async def run(self, session: Session, line: str) -> CommandOutcome:
        name, args = self.command.name, self.args
        if name in INTERACTIVE_ONLY:
            return CommandOutcome(name, args, f"/{name} only works in the interactive app", is_error=True)
        last = session.last_uuid
        holder = SessionHolder(session, _no_switch)
        result = await self.registry.run(line, CommandContext(holder, self.registry, interactive=False))
        # What the command appended (it may also have read back entries a resume left in the transcript).
        at = next((i for i in range(len(session.messages) - 1, -1, -1) if session.messages[i].uuid == last), -1)
        boundaries = [
            m for m in session.messages[at + 1 :] if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"
        ]
        if isinstance(result, PromptRequest):
            return CommandOutcome(name, args, result.shown, prompt=result.prompt)
        is_error = isinstance(result, TextOutput) and result.level == "error"
        return CommandOutcome(
            name, args, plain_text(result), is_error=is_error, boundaries=boundaries, context_usage=_context_usage(result)
        )


def local_command(prompt: str, session: Session | None = None) -> LocalCommand | None:
    """The command `prompt` runs, or None when it goes to the model: anything but a slash command
    the registry or the session's custom commands know (print mode has no shell and no picker:
    `!command` and `# note` are prompts)."""
    registry = default_registry()
    submission = submit(prompt, registry, session)
    if isinstance(submission, CommandLine) and submission.command is not None:
        return LocalCommand(submission.command, registry, submission.args)
    return None


def plain_text(result: CommandResult) -> str:
    """The result as the interactive front ends draw it, without colours or styles."""
    from rich.console import Console

    if isinstance(result, CompactDone):  # the app's wording points at its divider; here there is none
        return f"Compacted: ~{result.tokens_before:,} → ~{result.tokens_after:,} tokens in the model's view"

    from agent_repl.ui.render import render_result

    buffer = io.StringIO()
    console = Console(file=buffer, width=TEXT_WIDTH, color_system=None, force_terminal=False, highlight=False)
    console.print(render_result(result))
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()).strip("\n")


def _context_usage(result: CommandResult) -> dict[str, Any] | None:
    if not isinstance(result, ContextView):
        return None
    report = result.report
    return {
        "model": report.model,
        "total_tokens": report.used_tokens,
        "raw_max_tokens": report.context_window,
        "percentage": round(report.used_share * 100),
        "categories": [{"name": name, "tokens": tokens} for name, tokens in report.categories.items()],
    }


async def _no_switch(resume: Any, previous: Session) -> Session:
    raise RuntimeError("print mode runs one session")
