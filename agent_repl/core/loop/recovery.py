"""What the query loop does with a request that failed: recover and retry it, or end the turn.

The error is withheld while recovery runs, cheapest step first (docs/architecture.md 4.2): prompt too long
drains staged collapses, then compacts once per turn; a stream that broke is sent again after a
growing delay; a 400 naming the web tools turns them off; overload switches to the fallback
model. Only when no step applies is the error shown. The errors are classified in
agent_repl.core.api.failures.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agent_repl.core.api.client import describe_api_error, is_retryable_stream_failure
from agent_repl.core.api.failures import (
    is_overloaded,
    is_prompt_too_long,
    is_request_too_large,
    rejects_web_tools,
)
from agent_repl.core.loop.compact import compact_now
from agent_repl.core.loop.request import Interrupted, sleep_or_interrupt
from agent_repl.core.loop.state import End, Retry, State, Step, step
from agent_repl.core.model.events import AgentEvent, ErrorEvent, RequestRetry, SystemMessageEvent
from agent_repl.core.model.messages import AssistantMessage, SystemMessage

if TYPE_CHECKING:
    from agent_repl.core.loop.turn_session import TurnSession

MAX_STREAM_RETRIES = 3
PROMPT_SET_ASIDE = (
    "This prompt cannot fit in the context window, so it was left out of the conversation (the "
    "transcript keeps it) and the session goes on: shorten it, or save it to a file and mention the file with @."
)


@step
async def recover(
    out: Step[Retry | End], session: TurnSession, state: State, exc: Exception, body: dict[str, Any]
) -> AsyncIterator[AgentEvent]:
    """Retry the failed request if a recovery step applies, else show the error and end the turn
    (or raise `Interrupted` if the user stopped it meanwhile)."""
    recovery = _recovery_steps(session, state, exc, body)
    async for event in recovery:
        yield event
    if recovery.result is not None:
        out.decide(recovery.result)
        return
    if session.cancelled.is_set():
        raise Interrupted
    text = describe_api_error(exc)
    if state.stream_retries:
        text = f"{text.rstrip('.')}; gave up after {state.stream_retries} retries."
    if is_prompt_too_long(exc) and await _set_aside_unanswered_prompt(session, state):
        text = f"{text.rstrip('.')}. {PROMPT_SET_ASIDE}"
    error = await session.append(SystemMessage(subtype="api_error", content=text, level="error"))
    yield SystemMessageEvent(message=error)
    status = getattr(exc, "status_code", None)
    yield ErrorEvent(message=error.content, recoverable=True, api_status=status if isinstance(status, int) else None)
    out.decide(End("error"))


async def _set_aside_unanswered_prompt(session: TurnSession, state: State) -> bool:
    """Too long even after compaction, before any reply: the turn's prompt leaves the view, or every
    later request would carry it and be refused too. A turn already under way keeps its work."""
    messages = session.messages
    start = next((i for i, m in enumerate(messages) if m.uuid == state.prompt_uuid), None)
    if start is None or any(isinstance(m, AssistantMessage) for m in messages[start:]):
        return False
    for record in session.projector.set_aside(messages, state.prompt_uuid):
        await session.append_record(record)
    return True


@step
async def _recovery_steps(
    out: Step[Retry | None], session: TurnSession, state: State, exc: Exception, body: dict[str, Any]
) -> AsyncIterator[AgentEvent]:
    """The first recovery step that applies to `exc`, cheapest first; None when none does."""
    out.decide(None)
    if is_prompt_too_long(exc) and session.compactor is not None:
        records = session.projector.recover_from_overflow(session.messages)
        if records:
            for record in records:
                await session.append_record(record)
            out.decide(Retry("collapse_drain_retry"))
            return
        if not state.has_attempted_reactive_compact:
            state.has_attempted_reactive_compact = True
            # Refused for its size in bytes (a 413), not its tokens: the request must shed bytes.
            byte_budget = len(json.dumps(body).encode()) // 2 if is_request_too_large(exc) else None
            compaction = compact_now(session, "reactive", byte_budget=byte_budget)
            async for event in compaction:
                yield event
            if compaction.result:
                state.just_compacted = True
                out.decide(Retry("reactive_compact_retry"))
        return
    if is_retryable_stream_failure(exc) and state.stream_retries < MAX_STREAM_RETRIES:
        state.stream_retries += 1
        delay = min(0.5 * 2 ** (state.stream_retries - 1), 8.0)
        yield RequestRetry(attempt=state.stream_retries, delay_seconds=delay, error=describe_api_error(exc))
        await sleep_or_interrupt(delay, session.cancelled)
        out.decide(Retry("stream_retry"))
        return
    if rejects_web_tools(exc) and session.settings.web_tools:
        session.turn_off_web_tools()
        notice = await session.append(
            SystemMessage(
                subtype="informational",
                content=f"{describe_api_error(exc).rstrip('.')}. WebSearch and WebFetch are off for this session; "
                'set "web_tools": false in settings to leave them out from the start.',
                level="warning",
            )
        )
        yield SystemMessageEvent(message=notice)
        out.decide(Retry("web_tools_off_retry"))
        return
    fallback = session.settings.fallback_model
    if is_overloaded(exc) and fallback and session.model != fallback:
        session.model = fallback
        notice = await session.append(
            SystemMessage(subtype="informational", content=f"The model is overloaded; switched to {fallback}.", level="warning")
        )
        yield SystemMessageEvent(message=notice)
        state.stream_retries = 0
        out.decide(Retry("fallback_model"))
