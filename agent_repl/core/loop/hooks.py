"""Where the query loop and the session call their hooks (agent_repl.core.hooks.runner), and what each
answer does to the history.

- SessionStart (startup, resume, clear, compact) and UserPromptSubmit: context for the model as
  meta entries; a UserPromptSubmit hook that blocks refuses the prompt, which is not kept.
- Stop / SubagentStop: a hook that blocks sends the model back with its reason
  (`stop_hook_blocking`), telling the next run `stop_hook_active`; at most
  `MAX_STOP_HOOK_BLOCKS` times in a row, then the turn ends with a warning.
- PreCompact runs before the summary request; its output, and SessionStart:compact context,
  follow the boundary, summary, kept messages and attachments.
- Notification when a permission prompt is shown; SessionEnd when the session closes.
Every failed hook leaves one warning line; `continue: false` ends the turn with its stopReason.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING

from agent_repl.core.hooks.io import HookOutcome
from agent_repl.core.hooks.records import failure_notices, hook_messages, stop_hook_summary
from agent_repl.core.loop.state import Step, step
from agent_repl.core.model.events import AgentEvent, SystemMessageEvent
from agent_repl.core.model.messages import SystemMessage

if TYPE_CHECKING:
    from agent_repl.core.loop.turn_session import TurnSession

# A Stop hook may send the model back this many times in a row in one turn; then the turn ends.
MAX_STOP_HOOK_BLOCKS = 5


async def _shown(session: TurnSession, notices: list[SystemMessage]) -> AsyncIterator[AgentEvent]:
    for notice in notices:
        stored = await session.append(notice)
        yield SystemMessageEvent(message=stored)


def _warning(text: str) -> SystemMessage:
    return SystemMessage(subtype="informational", content=text, level="warning")


async def record_outcome(session: TurnSession, outcome: HookOutcome, *, tool_use_id: str | None = None) -> AsyncIterator[AgentEvent]:
    """The user's lines (failures, system messages) and the model's entries (feedback, context)."""
    async for event in _shown(session, failure_notices(outcome)):
        yield event
    for message in hook_messages(outcome, tool_use_id=tool_use_id):
        await session.append(message)


async def session_start(session: TurnSession) -> AsyncIterator[AgentEvent]:
    """On a session's first turn: its SessionStart hooks (source startup, resume or clear)."""
    source = session.start_source
    if source is None:
        return
    session.start_source = None
    outcome = await session.hooks.run("SessionStart", {"source": source, "model": session.model}, match=source)
    async for event in record_outcome(session, outcome):
        yield event


@step
async def prompt_submit(out: Step[HookOutcome], session: TurnSession, prompt: str) -> AsyncIterator[AgentEvent]:
    """UserPromptSubmit, before the prompt is kept; the result is the outcome."""
    if session.agent_id:  # a sub-agent's prompt comes from the model, not the user
        out.decide(HookOutcome("UserPromptSubmit"))
        return
    outcome = await session.hooks.run("UserPromptSubmit", {"prompt": prompt})
    refused = outcome.blocked or outcome.stop_turn
    # A refusal's reason is said once, in the line that says the prompt was not sent.
    notices = failure_notices(replace(outcome, notices=[]) if refused else outcome)
    if refused:
        text = outcome.stop_reason if outcome.stop_turn and not outcome.blocked else "; ".join(outcome.notices)
        notices.append(_warning(f"The prompt was not sent: {text or 'a UserPromptSubmit hook refused it'}"))
    async for event in _shown(session, notices):
        yield event
    out.decide(outcome)


async def prompt_context(session: TurnSession, outcome: HookOutcome) -> None:
    """UserPromptSubmit context, after the prompt it is about."""
    for message in hook_messages(outcome):
        await session.append(message)


@step
async def stop_hooks(out: Step[HookOutcome], session: TurnSession, blocks: int) -> AsyncIterator[AgentEvent]:
    """The Stop (or, in a sub-agent, SubagentStop) hooks of a model that wants to end its turn;
    the result is their outcome. `blocks` is how many times they sent it back this turn."""
    event = "SubagentStop" if session.agent_id else "Stop"
    fields: dict[str, object] = {"stop_hook_active": blocks > 0}
    if session.agent_id:
        fields.update(agent_id=session.agent_id, agent_transcript_path=str(getattr(session.sink, "path", "")))
    outcome = await session.hooks.run(event, fields)
    out.decide(outcome)
    if not outcome.runs:
        return
    summary = stop_hook_summary(outcome, tool_use_id=str(uuid.uuid4()))
    summary.content = _stop_summary_line(outcome, event)
    notices = [summary, *failure_notices(outcome)]
    capped = outcome.blocked and not outcome.stop_turn and blocks >= MAX_STOP_HOOK_BLOCKS
    if capped:
        notices.append(_warning(f"{event} hooks sent the model back {blocks} times in a row; the turn ends here."))
    async for item in _shown(session, notices):
        yield item
    if outcome.blocked and not outcome.stop_turn:
        if capped:
            outcome.blocked = False
        else:
            for message in hook_messages(outcome):
                await session.append(message)


def _stop_summary_line(outcome: HookOutcome, event: str) -> str:
    count = f"{len(outcome.runs)} {event} hook{'s' if len(outcome.runs) != 1 else ''}"
    if outcome.stop_turn:
        return f"{count} stopped the turn: {outcome.stop_reason}"
    if outcome.blocked:
        return f"{count} sent the model back: {'; '.join(outcome.feedback)}"
    return f"{count} ran"


@step
async def pre_compact(
    out: Step[HookOutcome], session: TurnSession, trigger: str, instructions: str | None
) -> AsyncIterator[AgentEvent]:
    """PreCompact before the summary request (a reactive compaction is an automatic one); the
    result is the outcome, whose entries `after_compact` keeps."""
    kind = "manual" if trigger == "manual" else "auto"
    outcome = await session.hooks.run(
        "PreCompact", {"trigger": kind, "custom_instructions": instructions or ""}, match=kind
    )
    out.decide(outcome)
    async for item in _shown(session, failure_notices(outcome)):
        yield item


async def after_compact(session: TurnSession, pre: HookOutcome) -> AsyncIterator[AgentEvent]:
    """After boundary, summary, kept messages and attachments: the PreCompact hooks' results,
    then SessionStart:compact context."""
    for message in hook_messages(pre):
        await session.append(message)
    outcome = await session.hooks.run("SessionStart", {"source": "compact", "model": session.model}, match="compact")
    async for event in record_outcome(session, outcome):
        yield event


async def notify(session: TurnSession, message: str, notification_type: str) -> None:
    """Notification hooks (a permission prompt is waiting); their failures wait for the next notice."""
    outcome = await session.hooks.run(
        "Notification", {"message": message, "notification_type": notification_type}, match=notification_type
    )
    session.pending_notices.extend(outcome.failures)


async def session_end(session: TurnSession, reason: str) -> None:
    """SessionEnd as the session closes; nothing can stop it, and a failure is kept in the transcript."""
    outcome = await session.hooks.run("SessionEnd", {"reason": reason}, match=reason)
    for notice in failure_notices(outcome):
        await session.append(notice)
