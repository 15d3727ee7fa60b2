"""What the query loop keeps of the model's reply, and the tool calls it runs for it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from agent_repl.core.api.client import ModelResponse
from agent_repl.core.hooks.io import HookOutcome
from agent_repl.core.loop import hooks as loop_hooks
from agent_repl.core.loop.state import Step, step
from agent_repl.core.loop.token_budget import BudgetContinue, TokenBudget
from agent_repl.core.loop.tool_execution import ToolCallOutcome, execute_tool_calls
from agent_repl.core.model.events import (
    AgentEvent,
    AssistantMessageEvent,
    ErrorEvent,
    PermissionModeChanged,
    SystemMessageEvent,
    ToolResultEvent,
    ToolUseStarted,
)
from agent_repl.core.model.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    SystemMessage,
    TextBlock,
    ToolUseBlock,
    UserMessage,
)

if TYPE_CHECKING:
    from agent_repl.core.loop.turn_session import TurnSession


def complete_content(response: ModelResponse) -> list[ContentBlock]:
    """A reply cut off at its output cap or the window's edge, without the tool call it was still
    writing (its input is partial JSON: it never runs)."""
    content = list(response.content)
    if content and isinstance(content[-1], ToolUseBlock):
        content.pop()
    return content


async def store_reply(
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
        yield AssistantMessageEvent(message=entry)
        if isinstance(block, ToolUseBlock):
            yield ToolUseStarted(tool_use_id=block.id, name=block.name, input=block.input)


def refusal_text(response: ModelResponse) -> str:
    details = response.stop_details or {}
    category = details.get("category")
    explanation = details.get("explanation")
    text = f"{response.model} declined to answer this request" if response.model else "The model declined to answer this request"
    text += f" (category: {category})." if category else "."
    if explanation:
        text += f" {explanation}"
    return text


async def refused(session: TurnSession, response: ModelResponse) -> AsyncIterator[AgentEvent]:
    """A refusal is shown as one; the refused reply stays in the history but leaves the model's view."""
    text = refusal_text(response)
    async for event in warn(session, text):
        yield event
    yield ErrorEvent(message=text, recoverable=True)


def budget_nudge(going_on: BudgetContinue, budget: TokenBudget) -> UserMessage:
    """The continuation's nudge, recorded as an attachment so the transition is in the transcript."""
    attachment = {
        "type": "token_budget_continuation",
        "content": [going_on.nudge],
        "outputTokens": going_on.used,
        "budget": budget.budget,
        "continuation": going_on.continuation,
    }
    return UserMessage(content=going_on.nudge, is_meta=True, attachment=attachment)


@step
async def run_tools(out: Step[str | None], session: TurnSession, tool_uses: list[ToolUseBlock]) -> AsyncIterator[AgentEvent]:
    """Run the reply's calls; their hooks' words for the model follow all of the results (the
    API wants every result first). The result is why a hook ended the turn, if one did."""
    out.decide(None)
    # dontAsk: nobody is asked, so a call no rule allows is refused.
    runtime = session.tool_runtime(None if session.settings.dont_ask else session.ask)
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
                message=message,
            )
        else:
            yield item
    stopped: list[str] = []
    for tool_use_id, outcome in said:
        async for event in loop_hooks.record_outcome(session, outcome, tool_use_id=tool_use_id):
            yield event
        if outcome.stop_turn:
            stopped.append(outcome.stop_reason)
    if stopped:
        out.decide(stopped[0])


async def append_events(session: TurnSession, messages: list[Message]) -> AsyncIterator[AgentEvent]:
    """Keep the messages; the system notices among them are shown."""
    for message in messages:
        await session.append(message)
        if isinstance(message, SystemMessage):
            yield SystemMessageEvent(message=message)


async def warn(session: TurnSession, text: str) -> AsyncIterator[AgentEvent]:
    """A warning line for the user, kept in the transcript."""
    notice = await session.append(SystemMessage(subtype="informational", content=text, level="warning"))
    yield SystemMessageEvent(message=notice)


async def notices(session: TurnSession) -> AsyncIterator[AgentEvent]:
    """Warnings that arose outside the model's reply (an MCP server that failed), kept in the transcript."""
    for text in session.take_notices():
        async for event in warn(session, text):
            yield event
