"""One compaction as the query loop runs it (autocompact, reactive compact) and `/compact` does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from agent_repl.core.api.failures import CompactTrigger
from agent_repl.core.loop import hooks as loop_hooks
from agent_repl.core.loop.state import Step, step
from agent_repl.core.model.events import (
    AgentEvent,
    CompactionFinished,
    CompactionStarted,
    ErrorEvent,
    SystemMessageEvent,
)
from agent_repl.core.model.messages import SystemMessage

if TYPE_CHECKING:
    from agent_repl.core.loop.turn_session import TurnSession


@step
async def compact_now(
    out: Step[bool], session: TurnSession, trigger: CompactTrigger, instructions: str | None = None, *, byte_budget: int | None = None
) -> AsyncIterator[AgentEvent]:
    """Run one compaction, passing on its events; the result says whether it worked."""
    compactor = session.compactor
    if compactor is None:
        out.decide(False)
        return
    yield CompactionStarted(trigger=trigger)
    pre = loop_hooks.pre_compact(session, trigger, instructions)
    async for event in pre:
        yield event
    outcome = await compactor.compact(session, trigger=trigger, instructions=instructions, byte_budget=byte_budget)
    out.decide(outcome.ok)
    for message in outcome.new_messages:
        if isinstance(message, SystemMessage):
            yield SystemMessageEvent(message=message)
    if outcome.ok:
        async for event in loop_hooks.after_compact(session, pre.result):
            yield event
        yield CompactionFinished(trigger=trigger, tokens_before=outcome.tokens_before, tokens_after=outcome.tokens_after)
    elif trigger == "manual" or compactor.breaker_just_opened():
        notice = await session.append(SystemMessage(subtype="informational", content=outcome.message, level="warning"))
        yield SystemMessageEvent(message=notice)
        yield ErrorEvent(message=outcome.message, recoverable=True)
