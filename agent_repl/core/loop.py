"""The query loop: one user turn as an async stream of typed events (SPEC R3.7.4).

A `while True` over an explicit `State`, never recursion: each pass projects the history into
the model's view, streams one request, stores the reply, runs its tool calls and either ends
the turn or goes round again, recording why in `state.transition`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from agent_repl.core.client import ModelResponse, describe_api_error, is_retryable_stream_failure
from agent_repl.core.events import (
    AgentEvent,
    AssistantMessageEvent,
    ContextProjected,
    ErrorEvent,
    RequestRetry,
    StageReportEvent,
    SystemMessageEvent,
    TextDelta,
    ToolResultEvent,
    ToolUseStarted,
    TurnEnded,
    TurnEndReason,
    TurnStarted,
    UsageEvent,
)
from agent_repl.core.messages import (
    AssistantMessage,
    SystemMessage,
    TextBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from agent_repl.core.request import build_request
from agent_repl.core.tool_execution import ToolCallOutcome, execute_tool_calls

if TYPE_CHECKING:
    from agent_repl.core.session import Session

MAX_STREAM_RETRIES = 3
INTERRUPTED_MESSAGE = "[Request interrupted by user]"
INTERRUPTED_FOR_TOOL_USE = "[Request interrupted by user for tool use]"

T = TypeVar("T")


@dataclass
class State:
    """Everything one turn carries from one pass of the loop to the next."""

    requests: int = 0
    # Why the loop went round again: "start", "tool_results", "stream_retry".
    transition: str = "start"
    stream_retries: int = 0
    max_output_tokens_override: int | None = None
    has_attempted_reactive_compact: bool = False
    max_output_recovery_count: int = 0
    turn_usage: Usage = field(default_factory=Usage)
    final_text: str = ""


class Interrupted(Exception):
    pass


async def _until_cancelled(source: AsyncIterator[T], cancelled: asyncio.Event) -> AsyncIterator[T]:
    """Iterate `source`, stopping with `Interrupted` as soon as `cancelled` is set, even mid-wait."""
    cancel_wait = asyncio.ensure_future(cancelled.wait())
    try:
        while True:
            next_item = asyncio.ensure_future(anext(source))
            done, _ = await asyncio.wait({next_item, cancel_wait}, return_when=asyncio.FIRST_COMPLETED)
            if next_item not in done:
                next_item.cancel()
                await asyncio.gather(next_item, return_exceptions=True)
                raise Interrupted
            try:
                yield next_item.result()
            except StopAsyncIteration:
                return
    finally:
        cancel_wait.cancel()
        aclose = getattr(source, "aclose", None)
        if aclose is not None:
            await asyncio.gather(aclose(), return_exceptions=True)


async def _sleep_or_interrupt(seconds: float, cancelled: asyncio.Event) -> None:
    try:
        await asyncio.wait_for(cancelled.wait(), timeout=seconds)
    except TimeoutError:
        return
    raise Interrupted


def _ended(session: Session, state: State, reason: TurnEndReason) -> TurnEnded:
    if state.requests:
        for hook in session.after_turn_hooks:
            hook(session)
    return TurnEnded(reason=reason, num_requests=state.requests, usage=state.turn_usage, final_text=state.final_text)


async def run_turn(session: Session, prompt: str, *, max_turns: int | None = None) -> AsyncIterator[AgentEvent]:
    session.cancelled.clear()
    await session.ensure_started()
    user_message = await session.append(UserMessage(content=prompt))
    yield TurnStarted(prompt=prompt, message=user_message)
    state = State()
    await session.ensure_capabilities()
    while True:
        projection = session.projector.project(session.messages)
        for record in projection.records:
            await session.append_record(record)
        for message in projection.new_messages:
            yield SystemMessageEvent(message=await session.append(message))  # type: ignore[arg-type]
        session.request_count += 1
        yield ContextProjected(
            request_index=session.request_count,
            wire_messages=len(projection.wire),
            estimated_tokens=projection.estimated_tokens,
            stages=[StageReportEvent(**vars(r)) for r in projection.reports],
        )
        body = build_request(
            model=session.model,
            max_tokens=state.max_output_tokens_override or session.settings.max_output_tokens,
            system=session.system_prompt,
            tools=session.tool_definitions,
            messages=projection.wire,
            extra=projection.body_extras,
        )
        state.requests += 1
        response: ModelResponse | None = None
        partial_text: list[str] = []
        try:
            async for item in _until_cancelled(session.client.stream(body, betas=projection.betas or None), session.cancelled):
                if isinstance(item, ModelResponse):
                    response = item
                else:
                    if isinstance(item, TextDelta):
                        partial_text.append(item.text)
                    yield item
        except Interrupted:
            async for event in _record_interruption(session, "".join(partial_text), state):
                yield event
            yield _ended(session, state, "interrupted")
            return
        except Exception as exc:
            if is_retryable_stream_failure(exc) and state.stream_retries < MAX_STREAM_RETRIES:
                state.stream_retries += 1
                delay = min(0.5 * 2 ** (state.stream_retries - 1), 8.0)
                yield RequestRetry(attempt=state.stream_retries, delay_seconds=delay, error=describe_api_error(exc))
                try:
                    await _sleep_or_interrupt(delay, session.cancelled)
                except Interrupted:
                    async for event in _record_interruption(session, "", state):
                        yield event
                    yield _ended(session, state, "interrupted")
                    return
                state.transition = "stream_retry"
                continue
            error = await session.append(
                SystemMessage(subtype="api_error", content=describe_api_error(exc), level="error")
            )
            yield SystemMessageEvent(message=error)
            yield ErrorEvent(message=error.content, recoverable=True)
            yield _ended(session, state, "error")
            return
        assert response is not None, "the stream ended without a final message"
        state.stream_retries = 0
        session.add_usage(response.usage, response.model)
        state.turn_usage = state.turn_usage + response.usage
        yield UsageEvent(usage=response.usage, model=response.model)

        tool_uses: list[ToolUseBlock] = []
        for block in response.content or [TextBlock(text="")]:
            entry = await session.append(
                AssistantMessage(
                    message_id=response.message_id,
                    model=response.model,
                    content=[block],
                    stop_reason=response.stop_reason,
                    usage=response.usage,
                    request_id=response.request_id,
                )
            )
            yield AssistantMessageEvent(message=entry)
            if isinstance(block, ToolUseBlock):
                tool_uses.append(block)
                yield ToolUseStarted(tool_use_id=block.id, name=block.name, input=block.input)
        state.final_text = "".join(b.text for b in response.content if isinstance(b, TextBlock))
        for message in session.projector.observe_response(
            response.usage, anchor_uuid=session.messages[-1].uuid, context_management=response.context_management
        ):
            yield SystemMessageEvent(message=await session.append(message))  # type: ignore[arg-type]

        if not tool_uses:
            yield _ended(session, state, "completed")
            return

        runtime = session.tool_runtime(session.ask)
        async for item in execute_tool_calls(runtime, tool_uses, session.cancelled):
            if isinstance(item, ToolCallOutcome):
                message = await session.append(item.to_message(session_id=session.session_id))
                yield ToolResultEvent(
                    tool_use_id=item.tool_use.id,
                    name=item.tool_use.name,
                    is_error=item.output.is_error,
                    summary=item.output.summary,
                    persisted_path=item.persisted_path,
                    message=message,
                )
            else:
                yield item
        if session.cancelled.is_set():
            await session.append(UserMessage(content=INTERRUPTED_FOR_TOOL_USE))
            yield _ended(session, state, "interrupted")
            return
        if max_turns is not None and state.requests >= max_turns:
            yield _ended(session, state, "max_turns")
            return
        state.transition = "tool_results"


async def _record_interruption(session: Session, partial_text: str, state: State) -> AsyncIterator[AgentEvent]:
    """Keep what the user already saw of an interrupted reply, then mark the interruption."""
    if partial_text:
        entry = await session.append(
            AssistantMessage(
                message_id=f"interrupted-{session.request_count}-{session.session_id[:8]}",
                model=session.model,
                content=[TextBlock(text=partial_text)],
                stop_reason=None,
                is_synthetic=True,
            )
        )
        yield AssistantMessageEvent(message=entry)
    await session.append(UserMessage(content=INTERRUPTED_MESSAGE))
    state.final_text = partial_text
