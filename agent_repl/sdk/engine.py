"""One SDK session: read stdin, run each user message as a turn, answer control requests.

The session stays open across user messages until stdin closes; the turns already queued
then run to their end. Control requests are answered while a turn runs (an `interrupt`
stops it), and the requests this side sends (`can_use_tool`, `hook_callback`,
`mcp_message`) are answered by the SDK on the same stdin.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_repl.bootstrap import ResumeSource, close_session, open_session
from agent_repl.core.config.settings import Settings
from agent_repl.core.model.events import ErrorEvent, ToolResultEvent, ToolUseStarted, TurnEnded
from agent_repl.core.model.messages import new_uuid
from agent_repl.mcp.connection import McpConnection
from agent_repl.print_fields import RunFacts, init_line
from agent_repl.print_mode import message_line, result_object
from agent_repl.sdk.control import ControlHandlers
from agent_repl.sdk.mcp_servers import SdkMcpConnection
from agent_repl.sdk.permissions import SdkPermissions
from agent_repl.sdk.wire import StdinLines, Wire
from agent_repl.session import Session


def prompt_text(message: dict[str, Any]) -> str:
    """The text of a user message (a string, or text blocks; other blocks are left out)."""
    content = (message.get("message") or {}).get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )


class SdkSession:
    def __init__(self, wire: Wire, max_turns: int | None) -> None:
        self.wire = wire
        self.max_turns = max_turns
        self.prompts: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.ready = asyncio.Event()
        self.session: Session | None = None
        self.permissions: SdkPermissions | None = None
        self.handling: dict[str, asyncio.Task[None]] = {}
        self.controls = ControlHandlers(self)

    async def read(self, lines: StdinLines) -> None:
        while True:
            item = await lines.next()
            if item is None:
                self.wire.closed()
                self.prompts.put_nowait(None)
                return
            if isinstance(item, str):
                print(f"agent-repl: {item}", file=sys.stderr)
                continue
            kind = item.get("type")
            if kind == "control_response":
                self.wire.answered(item.get("response") or {})
            elif kind == "control_request":
                self._handle(item)
            elif kind == "control_cancel_request":
                task = self.handling.pop(str(item.get("request_id")), None)
                if task is not None:
                    task.cancel()
            elif kind == "user":
                self.prompts.put_nowait(item)
            else:
                print(f"agent-repl: a line of type {kind!r} on stdin was ignored", file=sys.stderr)

    def _handle(self, item: dict[str, Any]) -> None:
        request_id = str(item.get("request_id"))
        request = item.get("request")
        body: dict[str, Any] = request if isinstance(request, dict) else {}
        task = asyncio.create_task(self.wire.respond(request_id, lambda: self.controls.handle(body)))
        self.handling[request_id] = task
        task.add_done_callback(lambda _t: self.handling.pop(request_id, None))

    async def run_turns(self) -> None:
        while (item := await self.prompts.get()) is not None:
            await self.run_turn(prompt_text(item))

    async def run_turn(self, prompt: str) -> None:
        session = self.session
        assert session is not None and self.permissions is not None
        started = time.monotonic()
        self.wire.send(init_line(session))
        ended: TurnEnded | None = None
        errors: list[str] = []
        inputs: dict[str, dict[str, Any]] = {}
        denials: list[dict[str, Any]] = []
        facts = RunFacts()
        api_error_status: int | None = None
        async for event in session.run_turn(prompt, max_turns=self.max_turns):
            facts.see(event)
            if isinstance(event, TurnEnded):
                ended = event
            elif isinstance(event, ErrorEvent):
                errors.append(event.message)
                api_error_status = event.api_status or api_error_status
            elif isinstance(event, ToolUseStarted):
                inputs[event.tool_use_id] = event.input
            elif isinstance(event, ToolResultEvent) and event.denied:
                denials.append(
                    {
                        "tool_name": event.name,
                        "tool_use_id": event.tool_use_id,
                        "tool_input": inputs.get(event.tool_use_id, {}),
                    }
                )
            out = message_line(event, session.session_id, session.thinking_display, facts)
            if out is not None:
                self.wire.send(out)
        duration = int((time.monotonic() - started) * 1000)
        self.wire.send(result_object(session, ended, errors, duration, denials, facts, api_error_status))

    def status_line(self) -> dict[str, Any]:
        assert self.session is not None and self.permissions is not None
        return {
            "type": "system",
            "subtype": "status",
            "status": None,
            "permissionMode": self.permissions.mode_name,
            "uuid": new_uuid(),
            "session_id": self.session.session_id,
        }


async def run_sdk_session(
    settings: Settings,
    cwd: Path,
    resume: ResumeSource | None,
    *,
    max_turns: int | None = None,
    ask_sdk: bool = False,
    sdk_mcp_servers: Sequence[str] | None = None,
) -> int:
    """Serve one SDK program on stdin/stdout until stdin closes. `ask_sdk`: questions of permission
    go to the program (`--permission-prompt-tool stdio`); without it what no rule allows is denied.
    `sdk_mcp_servers`: the MCP servers the program runs itself, reached through it (by default
    those `--mcp-config` named with `"type": "sdk"`)."""
    wire = Wire()
    sdk = SdkSession(wire, max_turns)
    reader = asyncio.create_task(sdk.read(await StdinLines.open()))

    def program_servers(log_dir: Path) -> list[McpConnection]:
        return [
            SdkMcpConnection(
                name,
                wire,
                log_dir=log_dir,
                startup_timeout=settings.mcp_startup_timeout,
                tool_timeout=settings.mcp_tool_timeout,
            )
            for name in (settings.sdk_mcp_servers if sdk_mcp_servers is None else sdk_mcp_servers)
        ]

    try:
        session = await open_session(settings, cwd, resume=resume, mcp_extra=program_servers)
    except Exception:
        reader.cancel()
        raise
    sdk.session = session
    sdk.permissions = SdkPermissions(session, wire, session.interrupt, may_bypass=settings.skip_permissions)
    if ask_sdk:
        session.ask = sdk.permissions.ask
    for notice in [*session.notices, *filter(None, [session.sandbox.notice()])]:
        print(f"agent-repl: {notice}", file=sys.stderr)
    sdk.ready.set()
    try:
        await sdk.run_turns()
    finally:
        for task in list(sdk.handling.values()):
            task.cancel()
        reader.cancel()
        await close_session(session)
    return 0
