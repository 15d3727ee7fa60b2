"""A session: the full history, where it is written, and what a turn needs to run.

The history (`messages`) is append-only and complete (SPEC R1.1); every entry is written to the
transcript as it is appended. The model's view is built from it each turn by the projector.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from agent_repl.core.client import ModelClient
from agent_repl.core.events import AgentEvent
from agent_repl.core.file_state import ReadLedger
from agent_repl.core.messages import Message, Usage, UserMessage, iso_timestamp, utc_now
from agent_repl.core.models import cost_usd
from agent_repl.core.permission_mode import ModeHolder, PermissionMode
from agent_repl.core.permissions import ApprovalCallback, PermissionPolicy
from agent_repl.core.projection import Projector
from agent_repl.core.recovery import ContextGuard
from agent_repl.core.redaction import SecretRedactor
from agent_repl.core.request import tool_definitions
from agent_repl.core.settings import Settings
from agent_repl.core.system_prompt import build_system_prompt, session_context
from agent_repl.core.tool import Tool
from agent_repl.core.tool_execution import ToolRuntime


class TranscriptSink(Protocol):
    """Where history entries and side records go as they happen (the JSONL transcript)."""

    async def append_message(self, message: Message) -> None: ...

    async def append_record(self, record: Any) -> None: ...


class MemorySink:
    """A sink that keeps everything in memory, for tests and dry runs."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.records: list[Any] = []

    async def append_message(self, message: Message) -> None:
        self.messages.append(message)

    async def append_record(self, record: Any) -> None:
        self.records.append(record)


class Session:
    def __init__(
        self,
        *,
        session_id: str,
        cwd: Path,
        settings: Settings,
        client: ModelClient,
        tools: list[Tool],
        projector: Projector,
        sink: TranscriptSink,
        tool_results_dir: Path,
        history: list[Message] | None = None,
        ask: ApprovalCallback | None = None,
        permissions: PermissionPolicy | None = None,
        context_provider: Callable[[Path], str] = session_context,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.settings = settings
        self.model = settings.model
        self.client = client
        self.tools = {tool.name: tool for tool in tools}
        self.tool_definitions = tool_definitions(tools)
        self.projector = projector
        self.sink = sink
        self.tool_results_dir = tool_results_dir
        self.messages: list[Message] = list(history or [])
        self.system_prompt = build_system_prompt(cwd)
        self.permissions = permissions or PermissionPolicy.from_rules(
            settings.permissions.allow, settings.permissions.deny, skip_all=settings.skip_permissions
        )
        self.ask = ask
        # Tool output is stored without the API key (see agent_repl.core.redaction).
        self.redactor = SecretRedactor.of(settings.api_key)
        self.tool_state: dict[str, Any] = {}
        # What Edit and Write check: the files the model read or wrote, as they were then.
        self.files = ReadLedger()
        self.mode = ModeHolder()
        # The mode the model was last told about (plan mode on or off).
        self.announced_mode = PermissionMode.DEFAULT
        # Awaited with a path before a tool changes the file (the file history's checkpoint).
        self.before_change: Callable[[Path], Awaitable[None]] | None = None
        self.usage_total = Usage()
        self.cost_total_usd = 0.0
        self.request_count = 0
        self.cancelled = asyncio.Event()
        self._context_provider = context_provider
        self.capabilities_checked = False
        # Stamps every entry; the pipeline's time-based decisions use the same clock.
        self.clock = clock
        # Compaction, collapse drains and the blocking limit (agent_repl.context provides it).
        self.context_guard: ContextGuard | None = None
        # Called after every turn that reached the model (background work such as session memory).
        self.after_turn_hooks: list[Callable[[Session], None]] = []
        # The session's notes (agent_repl.context.session_memory.SessionMemory) when there are any.
        self.memory: Any = None

    @property
    def last_uuid(self) -> str | None:
        return self.messages[-1].uuid if self.messages else None

    async def append(self, message: Message) -> Message:
        """Link the entry into the chain, keep it, and write it before anything else happens."""
        message.parent_uuid = self.last_uuid
        message.session_id = self.session_id
        message.timestamp = iso_timestamp(self.clock())
        await self.sink.append_message(message)
        self.messages.append(message)
        return message

    async def append_record(self, record: Any) -> None:
        await self.sink.append_record(record)

    async def ensure_started(self) -> None:
        """A new session opens with one meta message of environment context; a resumed one keeps its own."""
        if not self.messages:
            await self.append(UserMessage(content=self._context_provider(self.cwd), is_meta=True))

    async def ensure_capabilities(self) -> None:
        """Ask the endpoint once whether it supports cache editing (our emulator does; the public API does not)."""
        if self.capabilities_checked:
            return
        self.capabilities_checked = True
        supported = await self.client.supports_cache_editing(self.model)
        configure = getattr(self.projector, "configure_endpoint", None)
        if configure is not None:
            configure(cache_editing=supported)

    def tool_runtime(self, ask: ApprovalCallback | None) -> ToolRuntime:
        return ToolRuntime(
            tools=self.tools,
            cwd=self.cwd,
            tool_results_dir=self.tool_results_dir,
            permissions=self.permissions,
            ask=ask,
            state=self.tool_state,
            redactor=self.redactor,
            files=self.files,
            mode=self.mode,
            before_change=self.before_change,
        )

    @property
    def permission_mode(self) -> PermissionMode:
        return self.mode.mode

    def add_usage(self, usage: Usage, model: str) -> None:
        self.usage_total = self.usage_total + usage
        self.cost_total_usd += cost_usd(usage, model)

    def interrupt(self) -> None:
        """Stop the running turn; the loop records what happened and leaves a valid history."""
        self.cancelled.set()

    def run_turn(self, prompt: str, *, max_turns: int | None = None) -> AsyncIterator[AgentEvent]:
        from agent_repl.core.loop import run_turn

        return run_turn(self, prompt, max_turns=max_turns)
