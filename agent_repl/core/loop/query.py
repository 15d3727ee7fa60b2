"""The query loop: one user turn as an async stream of typed events (docs/architecture.md 4.1).

A `while True` over an explicit `State`, never recursion (agent_repl.core.loop.state). Each pass
projects the history into the model's view and does what its action asks (`_context_step`):
compact first (`Compact`) or end the turn without sending (`Block`); streams one request
(agent_repl.core.loop.request); and ends in a decision:

- `Retry`: the same request again. A failed request goes through recovery
  (agent_repl.core.loop.recovery: `collapse_drain_retry`, `reactive_compact_retry`,
  `stream_retry`, `web_tools_off_retry`, `fallback_model`); a reply cut at max tokens is withheld
  and sent again with a higher cap once (`max_output_tokens_escalate`); a refused request goes
  once to the fallback model, when one is set (`refusal_fallback`).
- `Continue`: round again with what the pass added: the tool results (`tool_results`), a paused
  server-tool turn (`pause_turn`), a nudge to go on after a cut reply
  (`max_output_tokens_recovery`, at most 3 times), a Stop hook that sent the model back
  (`stop_hook_blocking`, agent_repl.core.loop.hooks) or the turn's unspent output budget
  (`token_budget_continuation`, agent_repl.core.loop.token_budget).
- `End`: the turn is over (`TurnEndReason`).

The turn leaves through one exit, which yields `TurnEnded`; an interruption (`Interrupted`, from
the stream, a retry's delay or the tool calls) takes one path, which records it and ends the turn.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from agent_repl.core.api.client import ModelResponse
from agent_repl.core.api.failures import (
    CONTINUE_NUDGE,
    CUT_OFF_STOP_REASONS,
    ESCALATED_MAX_OUTPUT_TOKENS,
    MAX_OUTPUT_RECOVERY_NUDGES,
)
from agent_repl.core.api.thinking_prefix import reply_prefixes
from agent_repl.core.loop import hooks as loop_hooks
from agent_repl.core.loop.big_prompt import attach_if_large
from agent_repl.core.loop.compact import compact_now
from agent_repl.core.loop.entries import with_entries
from agent_repl.core.loop.projection import Block, Compact, Projection
from agent_repl.core.loop.recovery import recover
from agent_repl.core.loop.reply import (
    append_events,
    budget_nudge,
    complete_content,
    notices,
    refusal_text,
    refused,
    run_tools,
    store_reply,
    warn,
)
from agent_repl.core.loop.request import (
    INTERRUPTED_FOR_TOOL_USE,
    Interrupted,
    record_interruption,
    request_body,
    send_request,
)
from agent_repl.core.loop.state import Continue, End, PassDecision, Retry, State, Step, step
from agent_repl.core.loop.token_budget import BudgetContinue, TokenBudget, parse_budget
from agent_repl.core.loop.user_actions import mention_messages
from agent_repl.core.model.events import (
    AgentEvent,
    AssistantMessageEvent,
    ContextProjected,
    ErrorEvent,
    LoopContinued,
    RequestRetry,
    StageReportEvent,
    TokenBudgetProgress,
    TurnEnded,
    TurnEndReason,
    TurnStarted,
    UsageEvent,
)
from agent_repl.core.model.messages import AssistantMessage, TextBlock, ToolUseBlock, UserMessage, wire_block
from agent_repl.core.permissions.mode import mode_reminder

if TYPE_CHECKING:
    from agent_repl.core.loop.turn_session import TurnSession

# A turn the API paused (pause_turn) is continued at most this many times in a row.
MAX_PAUSE_CONTINUATIONS = 10


def run_turn(session: TurnSession, prompt: str, *, max_turns: int | None = None) -> AsyncIterator[AgentEvent]:
    """The turn's events: its opening, then passes of the loop until one decides to end it; every
    entry it appends is in one of them."""
    return with_entries(session, _turn(session, prompt, max_turns))


async def _turn(session: TurnSession, prompt: str, max_turns: int | None) -> AsyncIterator[AgentEvent]:
    session.cancelled.clear()
    state = State()
    opening = _open_turn(session, state, prompt)
    async for event in opening:
        yield event
    ended = opening.result
    while ended is None:
        one_pass = _one_pass(session, state, max_turns)
        try:
            async for event in one_pass:
                yield event
            decision = one_pass.result
        except Interrupted as interrupted:
            async for event in record_interruption(session, state, interrupted):
                yield event
            decision = End("interrupted")
        match decision:
            case End():
                ended = decision
            case Retry(transition=transition) | Continue(transition=transition):
                state.transition = transition
    last = _ended(session, state, ended.reason)
    for record in session.projector.take_counts(session.messages):
        await session.append_record(record)
    yield last


def _ended(session: TurnSession, state: State, reason: TurnEndReason) -> TurnEnded:
    """The turn's last event, with the next request's estimate its after-turn hooks read too."""
    tokens = session.projector.next_request_tokens(session.messages)
    if state.requests:
        for hook in session.after_turn_hooks:
            hook(session, tokens)
    return TurnEnded(
        reason=reason,
        num_requests=state.requests,
        usage=state.turn_usage,
        final_text=state.final_text,
        next_request_tokens=tokens,
    )


@step
async def _open_turn(
    out: Step[End | None], session: TurnSession, state: State, prompt: str
) -> AsyncIterator[AgentEvent]:
    """Before the first request: SessionStart and UserPromptSubmit hooks, the prompt and what it
    mentions, the permission mode's reminder. The result ends the turn if a hook refused the prompt."""
    await session.ensure_started()
    async for event in loop_hooks.session_start(session):
        yield event
    submitted = loop_hooks.prompt_submit(session, prompt)
    async for event in submitted:
        yield event
    if submitted.result.blocked or submitted.result.stop_turn:
        out.decide(End("hook_stopped"))
        return
    window = session.settings.context_window or session.model_info.context_window
    sent = attach_if_large(prompt, window, getattr(session, "tool_results_dir", None))
    user_message = await session.append(UserMessage(content=sent))
    state.prompt_uuid = user_message.uuid
    if session.file_history is not None:
        await session.file_history.start_prompt(user_message.uuid)
    yield TurnStarted(prompt=prompt, message=user_message)
    async for event in append_events(session, await mention_messages(session, prompt)):
        yield event  # `@path`: the file or listing for the model, a notice for the screen
    await loop_hooks.prompt_context(session, submitted.result)
    reminder = mode_reminder(session.announced_mode, session.mode.mode)
    session.announced_mode = session.mode.mode
    if reminder:
        await session.append(UserMessage(content=reminder, is_meta=True))
    await _announce_background(session)
    async for event in notices(session):
        yield event
    budget = parse_budget(prompt) or session.settings.max_output_budget
    state.budget = TokenBudget(budget) if budget else None
    await session.ensure_capabilities()
    out.decide(None)


async def _announce_background(session: TurnSession) -> None:
    """Background commands that ended since the last request: the model hears of each once."""
    for text in session.take_task_notifications():
        await session.append(UserMessage(content=text, is_meta=True))


@step
async def _one_pass(
    out: Step[PassDecision], session: TurnSession, state: State, max_turns: int | None
) -> AsyncIterator[AgentEvent]:
    """One request, and what its reply (or its failure) leads to."""
    context = _context_step(session, state)
    async for event in context:
        yield event
    if isinstance(context.result, End):
        out.decide(context.result)
        return
    projection = context.result
    session.request_count += 1
    yield ContextProjected(
        request_index=session.request_count,
        wire_messages=len(projection.wire),
        estimated_tokens=projection.estimated_tokens,
        stages=[StageReportEvent(**vars(r)) for r in projection.reports],
        transition=state.transition,
    )
    body = request_body(session, state, projection)
    sent = send_request(session, state, body)
    async for event in sent:
        yield event
    after: Step[Retry | End] | Step[PassDecision]
    if isinstance(sent.result, Exception):
        after = recover(session, state, sent.result, body)
    else:
        after = _reply_step(session, state, projection, body["max_tokens"], sent.result, max_turns)
    async for event in after:
        yield event
    out.decide(after.result)


async def _project(session: TurnSession) -> tuple[Projection, list[AgentEvent]]:
    projection = session.projector.project(session.messages)
    for record in projection.records:
        await session.append_record(record)
    events = [event async for event in append_events(session, projection.new_messages)]
    return projection, events


def compaction_due_between_turns(session: TurnSession, projection: Projection) -> tuple[bool, int]:
    """Whether the session's compactor compacts at this turn's start, and the estimate it decided
    on. It compacts only from a size on: under an upper bound of the estimate it would not, and
    over one the exact estimate decides."""
    compactor, tokens = session.compactor, projection.estimated_tokens
    if compactor is None or not compactor.due_between_turns(session, projection.view, tokens):
        return False, tokens
    if projection.estimate_is_upper_bound:
        exact = session.projector.next_request_tokens(session.messages)
        tokens = exact if exact is not None else tokens
        return compactor.due_between_turns(session, projection.view, tokens), tokens
    return True, tokens


@step
async def _context_step(
    out: Step[Projection | End], session: TurnSession, state: State
) -> AsyncIterator[AgentEvent]:
    """The view for the next request, compacted first when the pipeline's action is `Compact`; on
    `Block` (over the blocking limit, autocompact off) the turn ends without sending it."""
    projection, events = await _project(session)
    for event in events:
        yield event
    action = projection.action
    tokens = projection.estimated_tokens
    if action is None and state.requests == 0:
        due, tokens = compaction_due_between_turns(session, projection)
        if due:
            action = Compact("auto")
    if isinstance(action, Compact):
        compaction = compact_now(session, action.trigger)
        async for event in compaction:
            yield event
        if compaction.result:
            state.just_compacted = True
            projection, events = await _project(session)
            for event in events:
                yield event
        else:
            # The checks again: a failure that opened the breaker turns the blocking limit on.
            action = session.projector.check(tokens)
    if isinstance(action, Block) and not state.just_compacted:
        notice = await session.append(
            AssistantMessage(
                message_id=f"blocked-{state.prompt_uuid[:8]}",
                model="<synthetic>",
                content=[TextBlock(text=action.message)],
                is_synthetic=True,
            )
        )
        yield AssistantMessageEvent(message=notice)
        yield ErrorEvent(message=action.message, recoverable=True)
        out.decide(End("error"))
        return
    state.just_compacted = False
    out.decide(projection)


@step
async def _reply_step(
    out: Step[PassDecision],
    session: TurnSession,
    state: State,
    projection: Projection,
    max_tokens: int,
    response: ModelResponse,
    max_turns: int | None,
) -> AsyncIterator[AgentEvent]:
    """Count the reply's usage; keep it, unless it was cut at a cap that can still be raised."""
    state.stream_retries = 0
    session.add_usage(response.usage, response.model)
    state.turn_usage = state.turn_usage + response.usage
    yield UsageEvent(usage=response.usage, model=response.model)
    if state.budget is not None:
        yield TokenBudgetProgress(used=state.turn_usage.output_tokens, budget=state.budget.budget)
    if response.stop_reason == "max_tokens" and state.max_output_tokens_override is None:
        # Withheld: the same request again with a higher cap; the cut reply is not kept.
        escalated = min(ESCALATED_MAX_OUTPUT_TOKENS, session.model_info.max_output_tokens)
        if max_tokens < escalated:
            state.max_output_tokens_override = escalated
            yield RequestRetry(
                attempt=1, delay_seconds=0, error="output token limit reached; raising the limit"
            )
            out.decide(Retry("max_output_tokens_escalate"))
            return
    cut = response.stop_reason in CUT_OFF_STOP_REASONS
    content = complete_content(response) if cut else list(response.content)
    prefixes = reply_prefixes(
        projection.prompt_seed, projection.chain_after[-1], [wire_block(b) for b in content]
    )
    async for event in store_reply(session, response, content, prefixes):
        yield event
    state.streamed_text = None
    state.final_text = "".join(b.text for b in content if isinstance(b, TextBlock))
    async for event in append_events(
        session,
        session.projector.observe_response(
            response.usage,
            anchor_uuid=session.messages[-1].uuid,
            context_management=response.context_management,
        ),
    ):
        yield event
    for record in session.projector.take_records():
        await session.append_record(record)
    after = _after_reply(
        session, state, response, [b for b in content if isinstance(b, ToolUseBlock)], cut, max_turns
    )
    async for event in after:
        yield event
    out.decide(after.result)


@step
async def _after_reply(
    out: Step[PassDecision],
    session: TurnSession,
    state: State,
    response: ModelResponse,
    tool_uses: list[ToolUseBlock],
    cut: bool,
    max_turns: int | None,
) -> AsyncIterator[AgentEvent]:
    """Where the kept reply leads: its tool calls run and the loop goes round, or the turn ends."""
    if response.stop_reason == "refusal":
        fallback = session.settings.fallback_model
        if fallback and state.refusal_fallback is None and response.model != fallback:
            # Once per refused request: the same request on the fallback model (the refused reply
            # stays in the history, out of the model's view).
            state.refusal_fallback = fallback
            async for event in warn(
                session, f"{refusal_text(response)} Trying the request once on {fallback}."
            ):
                yield event
            out.decide(Retry("refusal_fallback"))
            return
        async for event in refused(session, response):
            yield event
        out.decide(End("refusal"))
        return
    state.refusal_fallback = None
    if response.stop_reason == "pause_turn":
        # A server-tool loop paused: its content goes back as is and the model carries on.
        state.pause_continuations += 1
        if state.pause_continuations > MAX_PAUSE_CONTINUATIONS:
            yield ErrorEvent(
                message="The model paused its turn too many times in a row; stopped.", recoverable=True
            )
            out.decide(End("error"))
        else:
            out.decide(Continue("pause_turn"))
        return
    state.pause_continuations = 0
    if cut and state.max_output_recovery_count >= MAX_OUTPUT_RECOVERY_NUDGES:
        message = "The reply kept hitting the output token limit; stopped after 3 attempts to continue."
        yield ErrorEvent(message=message, recoverable=True)
        out.decide(End("error"))
        return
    if not tool_uses and not cut:
        finishing = _model_wants_to_stop(session, state)
        async for event in finishing:
            yield event
        out.decide(finishing.result)
        return
    if tool_uses:
        tools = run_tools(session, tool_uses)
        async for event in tools:
            yield event
        async for event in notices(session):
            yield event
        if session.cancelled.is_set():
            raise Interrupted(INTERRUPTED_FOR_TOOL_USE)
        await _announce_background(session)
        if tools.result is not None:
            async for event in warn(session, tools.result):
                yield event
            out.decide(End("hook_stopped"))
            return
    if cut:
        # The model hears where it was cut off (a tool call it had not finished never ran).
        state.max_output_recovery_count += 1
        await session.append(UserMessage(content=CONTINUE_NUDGE, is_meta=True))
        out.decide(Continue("max_output_tokens_recovery"))
    elif max_turns is not None and state.requests >= max_turns:
        out.decide(End("max_turns"))
    elif _over_budget(session):
        out.decide(End("max_budget"))
    else:
        out.decide(Continue("tool_results"))


def _over_budget(session: TurnSession) -> bool:
    """`max_budget_usd` is spent (checked between requests: a request under way is never cut)."""
    budget, spent = session.settings.max_budget_usd, session.cost_total_usd
    return budget is not None and spent is not None and spent >= budget


@step
async def _model_wants_to_stop(
    out: Step[PassDecision], session: TurnSession, state: State
) -> AsyncIterator[AgentEvent]:
    """A finished reply without tool calls: Stop hooks may send the model back, and so may the
    turn's unspent output budget; otherwise the turn is complete."""
    stop = loop_hooks.stop_hooks(session, state.stop_hook_blocks)
    async for event in stop:
        yield event
    if stop.result.stop_turn:
        out.decide(End("hook_stopped"))
    elif stop.result.blocked:
        state.stop_hook_blocks += 1
        yield LoopContinued(transition="stop_hook_blocking", detail="; ".join(stop.result.feedback))
        out.decide(Continue("stop_hook_blocking"))
    elif state.budget is not None and isinstance(
        going_on := state.budget.check(state.turn_usage.output_tokens), BudgetContinue
    ):
        await session.append(budget_nudge(going_on, state.budget))
        yield LoopContinued(transition="token_budget_continuation", detail=going_on.nudge)
        out.decide(Continue("token_budget_continuation"))
    else:
        out.decide(End("completed"))
