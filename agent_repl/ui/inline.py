"""The inline line-mode REPL: a prompt_toolkit prompt, rich output into the terminal's scrollback.

For terminals (or people) that do not want a full-screen app. It consumes the same event stream
as every other front end. Ctrl-C during a turn interrupts it; Ctrl-D at the prompt exits.
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory
from rich.console import Console
from rich.markup import escape

from agent_repl.bootstrap import ResumeSource, close_session, open_session
from agent_repl.core.events import (
    AgentEvent,
    ErrorEvent,
    RequestRetry,
    TextDelta,
    ThinkingDelta,
    ToolProgress,
    ToolResultEvent,
    ToolUseStarted,
    TurnEnded,
)
from agent_repl.core.permissions import Decision, PermissionRequest
from agent_repl.core.session import Session
from agent_repl.core.settings import Settings

HELP = """\
Type a message and press Enter. Commands:
  /help   this help          /cost   tokens and cost so far
  /exit   leave (Ctrl-D)     /clear  start a new session (the old one stays resumable)
Ctrl-C interrupts a running turn."""


def _tool_line(event: ToolUseStarted) -> str:
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)[:80]}" for k, v in event.input.items())
    return f"[bold cyan]●[/] [bold]{escape(event.name)}[/]({escape(shown)})"


class InlineRenderer:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.streaming = False

    def _end_stream(self) -> None:
        if self.streaming:
            self.console.file.write("\n")
            self.streaming = False

    def render(self, event: AgentEvent) -> None:
        if isinstance(event, TextDelta):
            self.console.file.write(event.text)
            self.console.file.flush()
            self.streaming = True
        elif isinstance(event, ThinkingDelta):
            return
        elif isinstance(event, ToolUseStarted):
            self._end_stream()
            self.console.print(_tool_line(event))
        elif isinstance(event, ToolProgress):
            return
        elif isinstance(event, ToolResultEvent):
            style = "red" if event.is_error else "dim"
            summary = event.summary or ("error" if event.is_error else "done")
            if event.persisted_path:
                summary += f" (full output: {event.persisted_path})"
            self.console.print(f"  [{style}]⎿ {escape(summary)}[/]")
        elif isinstance(event, RequestRetry):
            self._end_stream()
            self.console.print(f"[yellow]retrying ({event.attempt}) after: {escape(event.error)}[/]")
        elif isinstance(event, ErrorEvent):
            self._end_stream()
            self.console.print(f"[red]{escape(event.message)}[/]")
        elif isinstance(event, TurnEnded):
            self._end_stream()
            if event.reason == "interrupted":
                self.console.print("[yellow]interrupted[/]")


async def _ask_permission(prompt: PromptSession, console: Console, request: PermissionRequest) -> Decision:
    console.print(f"[bold yellow]Allow {escape(request.tool_name)}[/]: {escape(request.key)}")
    if request.description:
        console.print(f"  [dim]{escape(request.description)}[/]")
    answer = await prompt.prompt_async(f"[y] once / [a] always ({request.always_rule()}) / [n] deny > ")
    choice = answer.strip().lower()[:1]
    if choice == "y":
        return Decision.ALLOW_ONCE
    if choice == "a":
        return Decision.ALLOW_ALWAYS
    return Decision.DENY


async def _run_one_turn(session: Session, text: str, renderer: InlineRenderer) -> None:
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, session.interrupt)
    except (NotImplementedError, RuntimeError):
        pass
    try:
        async for event in session.run_turn(text):
            renderer.render(event)
    finally:
        try:
            loop.remove_signal_handler(signal.SIGINT)
        except (NotImplementedError, RuntimeError):
            pass


async def run_inline(settings: Settings, cwd: Path, resume: ResumeSource | None, *, first_prompt: str | None) -> int:
    console = Console(highlight=False)
    settings.home.mkdir(parents=True, exist_ok=True)
    prompt: PromptSession[str] = PromptSession(history=FileHistory(str(settings.home / "prompt-history")))

    async def ask(request: PermissionRequest) -> Decision:
        return await _ask_permission(prompt, console, request)

    session = await open_session(settings, cwd, resume=resume, ask=ask)
    renderer = InlineRenderer(console)
    console.print(f"[bold]agent-repl[/] · {escape(session.model)} · session {session.session_id[:8]} · /help for help")
    pending = first_prompt
    try:
        while True:
            if pending is None:
                try:
                    pending = await prompt.prompt_async("> ")
                except KeyboardInterrupt:
                    continue
                except EOFError:
                    break
            text, pending = pending.strip(), None
            if not text:
                continue
            if text in ("/exit", "/quit"):
                break
            if text == "/help":
                console.print(HELP)
            elif text == "/cost":
                usage = session.usage_total
                console.print(
                    f"input {usage.input_tokens:,} · cache write {usage.cache_creation_input_tokens:,} · "
                    f"cache read {usage.cache_read_input_tokens:,} · output {usage.output_tokens:,} · "
                    f"${session.cost_total_usd:.4f}"
                )
            elif text == "/clear":
                await close_session(session)
                session = await open_session(settings, cwd, ask=ask)
                console.print(f"[dim]new session {session.session_id[:8]}[/]")
            elif text.startswith("/"):
                console.print(f"[red]unknown command {escape(text.split()[0])}[/] (try /help)")
            else:
                await _run_one_turn(session, text, renderer)
    finally:
        await close_session(session)
    return 0
