"""One request of the query loop: its body, its stream, and the user's interruption.

The user interrupts by setting `session.cancelled`; whatever is waiting (the stream, a retry's
delay) stops with `Interrupted`, which the loop's one interruption path records.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, TypeVar

from agent_repl.core.api.client import ModelResponse
from agent_repl.core.api.request import build_request
from agent_repl.core.loop.projection import Projection
from agent_repl.core.loop.state import State, Step, step
from agent_repl.core.model.events import AgentEvent, AssistantMessageEvent, TextDelta
from agent_repl.core.model.messages import AssistantMessage, TextBlock, UserMessage

if TYPE_CHECKING:
    from agent_repl.core.loop.turn_session import TurnSession

INTERRUPTED_MESSAGE = "[Request interrupted by user]"
INTERRUPTED_FOR_TOOL_USE = "[Request interrupted by user for tool use]"

T = TypeVar("T")


class Interrupted(Exception):
    """The user stopped the turn; `marker` is the entry that tells the model so."""

    def __init__(self, marker: str = INTERRUPTED_MESSAGE) -> None:
        super().__init__(marker)
        self.marker = marker


async def until_cancelled(source: AsyncIterator[T], cancelled: asyncio.Event) -> AsyncIterator[T]:
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


async def sleep_or_interrupt(seconds: float, cancelled: asyncio.Event) -> None:
    try:
        await asyncio.wait_for(cancelled.wait(), timeout=seconds)
    except TimeoutError:
        return
    raise Interrupted


def request_body(session: TurnSession, state: State, projection: Projection) -> dict[str, Any]:
    body = build_request(
        model=session.model,
        # Never above what the model can write (a model the table lacks may allow less).
        max_tokens=min(
            state.max_output_tokens_override or session.settings.max_output_tokens,
            session.model_info.max_output_tokens,
        ),
        system=session.system_prompt,
        tools=session.request_tools(projection.loaded_tools),
        messages=projection.wire,
        extra=projection.body_extras,
        cache=projection.cache,
    )
    if state.refusal_fallback is not None and state.refusal_fallback != session.model:
        body = for_fallback(body, state.refusal_fallback, session.settings)
    return body


def for_fallback(body: dict[str, Any], model: str, settings: Any) -> dict[str, Any]:
    """The refused request as the fallback model gets it: the same request on another model, as
    the refusal docs describe. Only what the fallback takes differently is rebuilt for it: its
    output cap, the thinking and effort fields (`thinking_request`, for its model: no effort it
    does not take), and no clearing of thinking where it does not think up front."""
    from agent_repl.core.api.models import model_info
    from agent_repl.core.config.thinking_request import chosen_effort, request_fields, thinking_on

    info = model_info(model)
    out = {k: v for k, v in body.items() if k not in ("thinking", "output_config")}
    out["model"] = model
    out["max_tokens"] = min(body["max_tokens"], info.max_output_tokens)
    effort = chosen_effort(
        model,
        session_effort=settings.session_effort,
        model_effort=settings.model_effort,
        effort=settings.effort,
        thinking=settings.thinking,
    )
    out.update(
        request_fields(
            thinks_by_default=info.thinking_default_on,
            effort=effort,
            thinking=settings.thinking,
            display=settings.thinking_display,
        )
    )
    management = out.get("context_management")
    if isinstance(management, dict) and not thinking_on(info.thinking_default_on, settings.thinking):
        edits = [e for e in management.get("edits") or [] if e.get("type") != "clear_thinking_20251015"]
        if edits:
            out["context_management"] = {**management, "edits": edits}
        else:
            out.pop("context_management")
    return out


@step
async def send_request(
    out: Step[ModelResponse | Exception], session: TurnSession, state: State, body: dict[str, Any]
) -> AsyncIterator[AgentEvent]:
    """Stream one request, passing its events on; the result is the reply or why the request failed.
    `Interrupted` goes through to the loop, with what the user saw in `state.streamed_text`."""
    state.requests += 1
    state.streamed_text = ""
    started = time.monotonic()
    try:
        stream = session.client.stream(body, raw_events=session.stream_events)
        async for item in until_cancelled(stream, session.cancelled):
            if isinstance(item, ModelResponse):
                out.decide(item)
                continue
            if isinstance(item, TextDelta):
                state.streamed_text += item.text
            yield item
    except Interrupted:
        raise
    except Exception as exc:
        out.decide(exc)
    finally:
        session.api_duration_ms += (time.monotonic() - started) * 1000


async def record_interruption(session: TurnSession, state: State, interrupted: Interrupted) -> AsyncIterator[AgentEvent]:
    """Keep what the user already saw of a reply not yet stored, then mark the interruption."""
    partial = state.streamed_text
    if partial:
        entry = await session.append(
            AssistantMessage(
                message_id=f"interrupted-{session.request_count}-{session.session_id[:8]}",
                model=session.model,
                content=[TextBlock(text=partial)],
                stop_reason=None,
                is_synthetic=True,
            )
        )
        yield AssistantMessageEvent(message=entry)
    await session.append(UserMessage(content=interrupted.marker))
    if partial is not None:
        state.final_text = partial
