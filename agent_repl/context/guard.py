"""The context package's side of the loop's `ContextGuard`: when to compact, when to refuse a
request over the blocking limit, and how to drain staged collapses (SPEC R3.5.3, R3.7)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_repl.context.compact import CompactionOutcome, Compactor, Trigger
from agent_repl.context.pipeline import Pipeline
from agent_repl.context.thresholds import blocking_limit, is_at_blocking_limit
from agent_repl.core.recovery import BlockingLimit

if TYPE_CHECKING:
    from agent_repl.context.context_session import ContextSession


class PipelineGuard:
    def __init__(self, pipeline: Pipeline, compactor: Compactor) -> None:
        self.pipeline = pipeline
        self.compactor = compactor
        self._breaker_reported = False

    def wants_autocompact(self, session: ContextSession, estimated_tokens: int) -> bool:
        return self.compactor.wants_autocompact(session, estimated_tokens)

    def autocompact_on(self, session: ContextSession) -> bool:
        config = self.pipeline.state.config
        return session.settings.autocompact and config.strategy == "autocompact" and not self.compactor.disabled

    def blocking_message(self, session: ContextSession, estimated_tokens: int) -> str | None:
        """Only with autocompact off (R3.7.1); not when snip freed tokens the last usage cannot see."""
        state = self.pipeline.state
        if self.autocompact_on(session) or state.config.strategy == "collapse":
            return None
        if state.snip.tokens_freed_since_usage > 0:
            return None
        effective = state.config.effective_window
        if not is_at_blocking_limit(estimated_tokens, effective):
            return None
        return BlockingLimit(estimated_tokens, blocking_limit(effective)).text()

    async def compact(
        self, session: ContextSession, *, trigger: Trigger, instructions: str | None = None, byte_budget: int | None = None
    ) -> CompactionOutcome:
        return await self.compactor.compact(session, trigger=trigger, instructions=instructions, byte_budget=byte_budget)

    def drain_collapses(self, session: ContextSession) -> list[Any]:
        state = self.pipeline.state
        if state.config.strategy != "collapse":
            return []
        from agent_repl.context.collapse import drain_staged

        view = self.pipeline.project(session.messages, dry_run=True).view
        return list(drain_staged(view, state))

    def breaker_just_opened(self) -> bool:
        if self.compactor.disabled and not self._breaker_reported:
            self._breaker_reported = True
            return True
        return False
