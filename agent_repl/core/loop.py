"""The query loop: one user turn as an async stream of typed events (SPEC R3.7.4).

A `while True` over an explicit `State`, never recursion. Each pass: project the history into
the model's view; compact first if the view is over the autocompact threshold; refuse to send
when over the blocking limit with autocompact off; stream one request; store the reply; run its
tool calls; then end the turn or go round again, recording why in `state.transition`.

Recoverable API errors are withheld while recovery runs (R3.7.2): prompt too long drains staged
collapses, then compacts once per turn; a reply cut at max tokens raises the cap once, then asks
the model to continue at most 3 times; repeated overload switches to the fallback model.

When the model would end its turn, Stop hooks may send it back (`stop_hook_blocking`, see
agent_repl.core.loop_hooks) and so may the turn's output budget (`token_budget_continuation`,
agent_repl.core.token_budget).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from agent_repl.core import loop_hooks
from agent_repl.core.client import ModelResponse, describe_api_error, is_retryable_stream_failure
from agent_repl.core.events import (
    AgentEvent,
    AssistantMessageEvent,
    CompactionFinished,
    CompactionStarted,
    ContextProjected,
    ErrorEvent,
    LoopContinued,
    PermissionModeChanged,
    RequestRetry,
    StageReportEvent,
    SystemMessageEvent,
    TextDelta,
    TokenBudgetProgress,
    ToolResultEvent,
    ToolUseStarted,
    TurnEnded,
    TurnEndReason,
    TurnStarted,
    UsageEvent,
)
from agent_repl.core.hook_io import HookOutcome
from agent_repl.core.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    SystemMessage,
    TextBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
    wire_block,
)
from agent_repl.core.permission_mode import mode_reminder
from agent_repl.core.projection import Projection
from agent_repl.core.recovery import (
    CONTINUE_NUDGE,
    CUT_OFF_STOP_REASONS,
    ESCALATED_MAX_OUTPUT_TOKENS,
    MAX_OUTPUT_RECOVERY_NUDGES,
    Trigger,
    is_overloaded,
    is_prompt_too_long,
    is_request_too_large,
    rejects_web_tools,
)
from agent_repl.core.request import build_request
from agent_repl.core.thinking_prefix import reply_prefixes
from agent_repl.core.token_budget import Continue, TokenBudget, parse_budget
from agent_repl.core.tool_execution import ToolCallOutcome, execute_tool_calls
from agent_repl.core.user_actions import mention_messages

if TYPE_CHECKING:
    from agent_repl.core.turn_session import TurnSession

MAX_STREAM_RETRIES = 3
# A turn the API paused (pause_turn) is continued at most this many times in a row.
MAX_PAUSE_CONTINUATIONS = 10
INTERRUPTED_MESSAGE = "[Request interrupted by user]"
INTERRUPTED_FOR_TOOL_USE = "[Request interrupted by user for tool use]"

T = TypeVar("T")


@dataclass
class State:
    """Everything one turn carries from one pass of the loop to the next."""

    requests: int = 0
    # Why the loop went round again: "start", "tool_results", "stream_retry", "collapse_drain_retry",
    # "reactive_compact_retry", "max_output_tokens_escalate", "max_output_tokens_recovery", "fallback_model",
    # "pause_turn", "web_tools_off_retry", "stop_hook_blocking", "token_budget_continuation".
    transition: str = "start"
    stream_retries: int = 0
    max_output_tokens_override: int | None = None
    has_attempted_reactive_compact: bool = False
    max_output_recovery_count: int = 0
    pause_continuations: int = 0
    # Right after a compaction the last usage no longer describes the view: skip the blocking check.
    just_compacted: bool = False
    turn_usage: Usage = field(default_factory=Usage)
    final_text: str = ""
    # How many times Stop hooks sent the model back this turn (the next run gets `stop_hook_active`).
    stop_hook_blocks: int = 0
    budget: TokenBudget | None = None


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


def _ended(session: TurnSession, state: State, reason: TurnEndReason) -> TurnEnded:
    if state.requests:
        for hook in session.after_turn_hooks:
            hook(session)
    return TurnEnded(reason=reason, num_requests=state.requests, usage=state.turn_usage, final_text=state.final_text)


async def _append_events(session: TurnSession, messages: list[Message]) -> AsyncIterator[AgentEvent]:
    for message in messages:
        await session.append(message)
        if isinstance(message, SystemMessage):
            yield SystemMessageEvent(message=message)


async def _project(session: TurnSession) -> tuple[Projection, list[AgentEvent]]:
    projection = session.projector.project(session.messages)
    for record in projection.records:
        await session.append_record(record)
    events = [event async for event in _append_events(session, projection.new_messages)]
    return projection, events


async def compact_now(
    session: TurnSession, trigger: Trigger, instructions: str | None = None, *, byte_budget: int | None = None
) -> AsyncIterator[AgentEvent | bool]:
    """Run one compaction, yielding its events and finally whether it worked (also for /compact)."""
    guard = session.context_guard
    if guard is None:
        yield False
        return
    yield CompactionStarted(trigger=trigger)
    pre = HookOutcome("PreCompact")
    async for item in loop_hooks.pre_compact(session, trigger, instructions):
        if isinstance(item, HookOutcome):
            pre = item
        else:
            yield item
    outcome = await guard.compact(session, trigger=trigger, instructions=instructions, byte_budget=byte_budget)
    for message in outcome.new_messages:
        if isinstance(message, SystemMessage):
            yield SystemMessageEvent(message=message)
    if outcome.ok:
        async for event in loop_hooks.after_compact(session, pre):
            yield event
        yield CompactionFinished(trigger=trigger, tokens_before=outcome.tokens_before, tokens_after=outcome.tokens_after)
    elif trigger == "manual" or guard.breaker_just_opened():
        notice = await session.append(SystemMessage(subtype="informational", content=outcome.message, level="warning"))
        yield SystemMessageEvent(message=notice)  # type: ignore[arg-type]
        yield ErrorEvent(message=outcome.message, recoverable=True)
    yield outcome.ok


async def run_turn(session: TurnSession, prompt: str, *, max_turns: int | None = None) -> AsyncIterator[AgentEvent]:
    session.cancelled.clear()
    await session.ensure_started()
    async for event in loop_hooks.session_start(session):
        yield event
    submitted = HookOutcome("UserPromptSubmit")
    async for item in loop_hooks.prompt_submit(session, prompt):
        if isinstance(item, HookOutcome):
            submitted = item
        else:
            yield item
    if submitted.blocked or submitted.stop_turn:
        yield TurnEnded(reason="hook_stopped", num_requests=0, usage=Usage())
        return
    user_message = await session.append(UserMessage(content=prompt))
    if session.file_history is not None:
        await session.file_history.start_prompt(user_message.uuid)
    yield TurnStarted(prompt=prompt, message=user_message)
    async for event in _append_events(session, await mention_messages(session, prompt)):
        yield event  # `@path`: the file or listing for the model, a notice for the screen
    await loop_hooks.prompt_context(session, submitted)
    reminder = mode_reminder(session.announced_mode, session.mode.mode)
    session.announced_mode = session.mode.mode
    if reminder:
        await session.append(UserMessage(content=reminder, is_meta=True))
    async for event in _notices(session):
        yield event
    state = State()
    budget = parse_budget(prompt) or session.settings.max_output_budget
    state.budget = TokenBudget(budget) if budget else None
    await session.ensure_capabilities()
    guard = session.context_guard
    while True:
        projection, events = await _project(session)
        for event in events:
            yield event
        if guard is not None and guard.wants_autocompact(session, projection.estimated_tokens):
            compacted = False
            async for item in compact_now(session, "auto"):
                if isinstance(item, bool):
                    compacted = item
                else:
                    yield item
            if compacted:
                state.just_compacted = True
                projection, events = await _project(session)
                for event in events:
                    yield event
        blocked = None
        if guard is not None and not state.just_compacted:
            blocked = guard.blocking_message(session, projection.estimated_tokens)
        if blocked:
            notice = await session.append(
                AssistantMessage(message_id=f"blocked-{user_message.uuid[:8]}", model="<synthetic>",
                                 content=[TextBlock(text=blocked)], is_synthetic=True)
            )
            yield AssistantMessageEvent(message=notice)  # type: ignore[arg-type]
            yield ErrorEvent(message=blocked, recoverable=True)
            yield _ended(session, state, "error")
            return
        state.just_compacted = False
        session.request_count += 1
        yield ContextProjected(
            request_index=session.request_count,
            wire_messages=len(projection.wire),
            estimated_tokens=projection.estimated_tokens,
            stages=[StageReportEvent(**vars(r)) for r in projection.reports],
        )
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
        state.requests += 1
        response: ModelResponse | None = None
        partial_text: list[str] = []
        request_started = time.monotonic()
        try:
            stream = session.client.stream(body, betas=projection.betas or None, raw_events=session.stream_events)
            async for item in _until_cancelled(stream, session.cancelled):
                if isinstance(item, ModelResponse):
                    response = item
                else:
                    if isinstance(item, TextDelta):
                        partial_text.append(item.text)
                    yield item
        except Interrupted:
            session.api_duration_ms += (time.monotonic() - request_started) * 1000
            async for event in _record_interruption(session, "".join(partial_text), state):
                yield event
            yield _ended(session, state, "interrupted")
            return
        except Exception as exc:
            session.api_duration_ms += (time.monotonic() - request_started) * 1000
            recovery = _recover(session, state, exc, body)
            retry = False
            async for item in recovery:
                if isinstance(item, bool):
                    retry = item
                else:
                    yield item
            if retry:
                continue
            if session.cancelled.is_set():
                async for event in _record_interruption(session, "".join(partial_text), state):
                    yield event
                yield _ended(session, state, "interrupted")
                return
            text = describe_api_error(exc)
            if state.stream_retries:
                text = f"{text.rstrip('.')}; gave up after {state.stream_retries} retries."
            error = await session.append(SystemMessage(subtype="api_error", content=text, level="error"))
            yield SystemMessageEvent(message=error)  # type: ignore[arg-type]
            yield ErrorEvent(message=error.content, recoverable=True)
            yield _ended(session, state, "error")
            return
        assert response is not None, "the stream ended without a final message"
        session.api_duration_ms += (time.monotonic() - request_started) * 1000
        state.stream_retries = 0
        session.add_usage(response.usage, response.model)
        state.turn_usage = state.turn_usage + response.usage
        yield UsageEvent(usage=response.usage, model=response.model)
        if state.budget is not None:
            yield TokenBudgetProgress(used=state.turn_usage.output_tokens, budget=state.budget.budget)

        if response.stop_reason == "max_tokens" and state.max_output_tokens_override is None:
            # Withheld: the same request again with a higher cap; the cut reply is not kept.
            escalated = min(ESCALATED_MAX_OUTPUT_TOKENS, session.model_info.max_output_tokens)
            if body["max_tokens"] < escalated:
                state.max_output_tokens_override = escalated
                state.transition = "max_output_tokens_escalate"
                yield RequestRetry(attempt=1, delay_seconds=0, error="output token limit reached; raising the limit")
                continue
        cut = response.stop_reason in CUT_OFF_STOP_REASONS
        content = complete_content(response) if cut else list(response.content)
        prefixes = reply_prefixes(projection.prompt_seed, projection.chain_after[-1], [wire_block(b) for b in content])
        async for event in _store_reply(session, response, content, prefixes):
            yield event
        state.final_text = "".join(b.text for b in content if isinstance(b, TextBlock))
        async for event in _append_events(
            session,
            session.projector.observe_response(
                response.usage, anchor_uuid=session.messages[-1].uuid, context_management=response.context_management
            ),
        ):
            yield event
        if response.stop_reason == "refusal":
            async for event in _refused(session, response, state):
                yield event
            return
        if response.stop_reason == "pause_turn":
            # A server-tool loop paused: its content goes back as is and the model carries on.
            state.pause_continuations += 1
            if state.pause_continuations > MAX_PAUSE_CONTINUATIONS:
                yield ErrorEvent(message="The model paused its turn too many times in a row; stopped.", recoverable=True)
                yield _ended(session, state, "error")
                return
            state.transition = "pause_turn"
            continue
        state.pause_continuations = 0

        tool_uses = [b for b in content if isinstance(b, ToolUseBlock)]
        if cut and state.max_output_recovery_count >= MAX_OUTPUT_RECOVERY_NUDGES:
            message = "The reply kept hitting the output token limit; stopped after 3 attempts to continue."
            yield ErrorEvent(message=message, recoverable=True)
            yield _ended(session, state, "error")
            return
        if not tool_uses and not cut:
            stop = HookOutcome("Stop")
            async for item in loop_hooks.stop_hooks(session, state.stop_hook_blocks):
                if isinstance(item, HookOutcome):
                    stop = item
                else:
                    yield item
            if stop.stop_turn:
                yield _ended(session, state, "hook_stopped")
                return
            if stop.blocked:
                state.stop_hook_blocks += 1
                state.transition = "stop_hook_blocking"
                yield LoopContinued(transition="stop_hook_blocking", detail="; ".join(stop.feedback))
                continue
            if state.budget is not None and isinstance(step := state.budget.check(state.turn_usage.output_tokens), Continue):
                await session.append(_budget_nudge(step, state.budget))
                state.transition = "token_budget_continuation"
                yield LoopContinued(transition="token_budget_continuation", detail=step.nudge)
                continue
            yield _ended(session, state, "completed")
            return
        if tool_uses:
            stopped: list[str] = []
            async for event in _run_tools(session, tool_uses, stopped):
                yield event
            async for event in _notices(session):
                yield event
            if session.cancelled.is_set():
                await session.append(UserMessage(content=INTERRUPTED_FOR_TOOL_USE))
                yield _ended(session, state, "interrupted")
                return
            if stopped:
                notice = await session.append(SystemMessage(subtype="informational", content=stopped[0], level="warning"))
                yield SystemMessageEvent(message=notice)  # type: ignore[arg-type]
                yield _ended(session, state, "hook_stopped")
                return
        if cut:
            # The model hears where it was cut off (a tool call it had not finished never ran).
            state.max_output_recovery_count += 1
            await session.append(UserMessage(content=CONTINUE_NUDGE, is_meta=True))
            state.transition = "max_output_tokens_recovery"
            continue
        if max_turns is not None and state.requests >= max_turns:
            yield _ended(session, state, "max_turns")
            return
        state.transition = "tool_results"


def complete_content(response: ModelResponse) -> list[ContentBlock]:
    """A reply cut off at its output cap or the window's edge, without the tool call it was still
    writing (its input is partial JSON: it never runs)."""
    content = list(response.content)
    if content and isinstance(content[-1], ToolUseBlock):
        content.pop()
    return content


async def _refused(session: TurnSession, response: ModelResponse, state: State) -> AsyncIterator[AgentEvent]:
    """A refusal is shown as one; the refused reply stays in the history but leaves the model's view."""
    details = response.stop_details or {}
    category = details.get("category")
    explanation = details.get("explanation")
    text = "The model declined to answer this request"
    text += f" (category: {category})." if category else "."
    if explanation:
        text += f" {explanation}"
    notice = await session.append(SystemMessage(subtype="informational", content=text, level="warning"))
    yield SystemMessageEvent(message=notice)  # type: ignore[arg-type]
    yield ErrorEvent(message=text, recoverable=True)
    yield _ended(session, state, "refusal")


async def _recover(
    session: TurnSession, state: State, exc: BaseException, body: dict[str, Any]
) -> AsyncIterator[AgentEvent | bool]:
    """Try the recovery steps for a failed request, cheapest first; the last item says whether to retry."""
    guard = session.context_guard
    if is_prompt_too_long(exc) and guard is not None:
        records = guard.drain_collapses(session)
        if records:
            for record in records:
                await session.append_record(record)
            state.transition = "collapse_drain_retry"
            yield True
            return
        if not state.has_attempted_reactive_compact:
            state.has_attempted_reactive_compact = True
            compacted = False
            # Refused for its size in bytes (a 413), not its tokens: the request must shed bytes.
            byte_budget = len(json.dumps(body).encode()) // 2 if is_request_too_large(exc) else None
            async for item in compact_now(session, "reactive", byte_budget=byte_budget):
                if isinstance(item, bool):
                    compacted = item
                else:
                    yield item
            if compacted:
                state.just_compacted = True
                state.transition = "reactive_compact_retry"
                yield True
                return
        yield False
        return
    if is_retryable_stream_failure(exc) and state.stream_retries < MAX_STREAM_RETRIES:
        state.stream_retries += 1
        delay = min(0.5 * 2 ** (state.stream_retries - 1), 8.0)
        yield RequestRetry(attempt=state.stream_retries, delay_seconds=delay, error=describe_api_error(exc))
        try:
            await _sleep_or_interrupt(delay, session.cancelled)
        except Interrupted:
            yield False
            return
        state.transition = "stream_retry"
        yield True
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
        yield SystemMessageEvent(message=notice)  # type: ignore[arg-type]
        state.transition = "web_tools_off_retry"
        yield True
        return
    fallback = session.settings.fallback_model
    if is_overloaded(exc) and fallback and session.model != fallback:
        session.model = fallback
        notice = await session.append(
            SystemMessage(subtype="informational", content=f"The model is overloaded; switched to {fallback}.", level="warning")
        )
        yield SystemMessageEvent(message=notice)  # type: ignore[arg-type]
        state.stream_retries = 0
        state.transition = "fallback_model"
        yield True
        return
    yield False


async def _store_reply(
    session: TurnSession, response: ModelResponse, content: list[ContentBlock], prefixes: list[str]
) -> AsyncIterator[AgentEvent]:
    """One history entry per content block, sharing the reply's message id (as Claude Code stores
    it); each keeps the digest of the prefix it was produced after."""
    for index, block in enumerate(content or [TextBlock(text="")]):
        entry = await session.append(
            AssistantMessage(
                message_id=response.message_id,
                model=response.model,
                content=[block],
                stop_reason=response.stop_reason,
                usage=response.usage,
                request_id=response.request_id,
                prefix_digest=prefixes[index] if index < len(prefixes) else None,
            )
        )
        yield AssistantMessageEvent(message=entry)  # type: ignore[arg-type]
        if isinstance(block, ToolUseBlock):
            yield ToolUseStarted(tool_use_id=block.id, name=block.name, input=block.input)


def _budget_nudge(step: Continue, budget: TokenBudget) -> UserMessage:
    """The continuation's nudge, recorded as an attachment so the transition is in the transcript."""
    attachment = {
        "type": "token_budget_continuation",
        "content": [step.nudge],
        "outputTokens": step.used,
        "budget": budget.budget,
        "continuation": step.continuation,
    }
    return UserMessage(content=step.nudge, is_meta=True, attachment=attachment)


async def _run_tools(session: TurnSession, tool_uses: list[ToolUseBlock], stopped: list[str]) -> AsyncIterator[AgentEvent]:
    """Run the reply's calls; their hooks' words for the model follow all of the results (the
    API wants every result first), and `stopped` gets why a hook ended the turn."""
    runtime = session.tool_runtime(session.ask)
    changes = session.mode.changes
    said: list[tuple[str, HookOutcome]] = []
    async for item in execute_tool_calls(runtime, tool_uses, session.cancelled):
        if session.mode.changes != changes:
            # The approval that switched it (a plan approved) told the model in its result.
            changes = session.mode.changes
            session.announced_mode = session.mode.mode
            yield PermissionModeChanged(mode=session.mode.mode.value)
        if isinstance(item, ToolCallOutcome):
            said.extend((item.tool_use.id, outcome) for outcome in item.hooks)
            message = await session.append(item.to_message(session_id=session.session_id))
            yield ToolResultEvent(
                tool_use_id=item.tool_use.id,
                name=item.tool_use.name,
                is_error=item.output.is_error,
                summary=item.output.summary,
                persisted_path=item.persisted_path,
                denied=item.output.denied,
                message=message,  # type: ignore[arg-type]
            )
        else:
            yield item
    for tool_use_id, outcome in said:
        async for event in loop_hooks.record_outcome(session, outcome, tool_use_id=tool_use_id):
            yield event
        if outcome.stop_turn:
            stopped.append(outcome.stop_reason)


async def _notices(session: TurnSession) -> AsyncIterator[AgentEvent]:
    """Warnings that arose outside the model's reply (an MCP server that failed), kept in the transcript."""
    for text in session.take_notices():
        notice = await session.append(SystemMessage(subtype="informational", content=text, level="warning"))
        yield SystemMessageEvent(message=notice)  # type: ignore[arg-type]


async def _record_interruption(session: TurnSession, partial_text: str, state: State) -> AsyncIterator[AgentEvent]:
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
        yield AssistantMessageEvent(message=entry)  # type: ignore[arg-type]
    await session.append(UserMessage(content=INTERRUPTED_MESSAGE))
    state.final_text = partial_text
