"""What one turn of the query loop needs from its session, as protocols.

The loop, its recovery steps and the user's own actions (`!command`, `@path`) are written against
`TurnSession`, never against the concrete `Session` that composes everything: so the session may
call the loop without the two importing each other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, Self, TypeVar

from agent_repl.core.api.client import ModelClient
from agent_repl.core.api.failures import CompactTrigger
from agent_repl.core.api.models import ModelInfo
from agent_repl.core.config.settings import Settings
from agent_repl.core.hooks.runner import HookRunner
from agent_repl.core.loop.projection import Projector
from agent_repl.core.loop.tool_execution import ToolRuntime
from agent_repl.core.model.messages import Message, MessageT, Usage
from agent_repl.core.permissions.mode import ModeHolder, PermissionMode
from agent_repl.core.permissions.rules import ApprovalCallback


class CompactionResult(Protocol):
    ok: bool
    message: str
    tokens_before: int
    tokens_after: int
    new_messages: list[Any]


# The session a compaction works on: a compactor may need more of it than a turn does.
SessionT_contra = TypeVar("SessionT_contra", contravariant=True)


class Compaction(Protocol[SessionT_contra]):
    """Runs a compaction when the pipeline's `Compact` action, `/compact` or recovery asks for one
    (agent_repl.context.compact.Compactor is one)."""

    async def compact(
        self,
        session: SessionT_contra,
        *,
        trigger: CompactTrigger,
        instructions: str | None = None,
        byte_budget: int | None = None,
    ) -> CompactionResult:
        """`byte_budget`: after a 413, the most bytes the compaction request and the view after it may hold."""
        ...

    def breaker_just_opened(self) -> bool: ...

    def due_between_turns(self, session: SessionT_contra, view: list[Any], tokens: int) -> bool:
        """At a turn's start (before its first request), whether to compact now although no check asks."""
        ...


class TurnSession(Protocol):
    """The part of a session a turn reads and changes (agent_repl.session.Session is one)."""

    session_id: str
    cwd: Path
    settings: Settings
    client: ModelClient
    projector: Projector
    messages: list[Message]
    system_prompt: str
    model: str
    ask: ApprovalCallback | None
    cancelled: asyncio.Event
    compactor: Compaction[Self] | None
    # Called after a turn that sent a request, with the next request's estimate (None: unknown).
    after_turn_hooks: list[Callable[[Any, int | None], None]]
    # Checkpoints of the files the tools change (agent_repl.transcript.file_history), if kept.
    file_history: Any
    mode: ModeHolder
    announced_mode: PermissionMode
    request_count: int
    api_duration_ms: float
    stream_events: bool
    # Where its entries go (the transcript writer has a `path`).
    sink: Any
    # The configured hooks (agent_repl.core.loop.hooks calls them), the SessionStart source still
    # to run, the sub-agent's id (its stop runs SubagentStop), notices for the next turn.
    hooks: HookRunner
    start_source: str | None
    agent_id: str | None
    pending_notices: list[str]

    @property
    def model_info(self) -> ModelInfo: ...

    async def append(self, message: MessageT) -> MessageT: ...

    async def append_record(self, record: Any) -> None: ...

    async def ensure_started(self) -> None: ...

    async def ensure_capabilities(self) -> None: ...

    # What the session has cost so far in USD (None once a model used has no known price).
    cost_total_usd: float | None

    def add_usage(self, usage: Usage, model: str) -> None: ...

    def request_tools(self, loaded: frozenset[str]) -> list[dict[str, Any]]: ...

    def take_notices(self) -> list[str]: ...

    def take_task_notifications(self) -> list[str]: ...

    def turn_off_web_tools(self) -> None: ...

    def tool_runtime(self, ask: ApprovalCallback | None) -> ToolRuntime: ...
