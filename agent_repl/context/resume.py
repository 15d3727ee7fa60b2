"""Rebuilding the pipeline's state on resume from the transcript alone (docs/architecture.md 9.2).

The records are applied in order, as they were live (`agent_repl.context.records.apply`); the
bookkeeping that no record holds is derived from the history. Replacements are the recorded
strings, never recomputed from the files on disk, so a change to the preview template cannot
change bytes the prompt cache has already seen.

A Claude Code transcript holds none of our records; what its `microcompact_boundary` entries name
(`compactedToolIds`, the results Claude Code had cleared from its requests) stays cleared, with
our marker in place of the result.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent_repl.context.collapse import with_members
from agent_repl.context.microcompact import last_reply
from agent_repl.context.records import apply
from agent_repl.context.state import CLEARED_TOOL_RESULT, PipelineState
from agent_repl.core.model.messages import AssistantMessage, Message, SystemMessage, UserMessage
from agent_repl.transcript.records import CollapseCommitRecord


def rebuild_state(
    state: PipelineState, history: list[Message], records: Iterable[Any], *, earlier_replies: int = 0
) -> PipelineState:
    """`history` may start at a resume's cut; `earlier_replies` counts the model's replies before it."""
    # Everything already in the history was sent (or is about to be, unchanged): frozen unless replaced.
    state.budget.seen = {b.tool_use_id for m in history if isinstance(m, UserMessage) for b in m.tool_results()}
    for record in records:
        if isinstance(record, CollapseCommitRecord):
            record = with_members(record, history)
        if record is not None:
            apply(state, record)
    cleared = state.microcompact.cleared
    for tool_use_id in cleared_by_claude_code(history):
        cleared.setdefault(tool_use_id, CLEARED_TOOL_RESULT)
    reply = last_reply(history)
    state.microcompact.resumed_after = reply.uuid if reply is not None else None
    # A reply is stored as one entry per content block, all with its usage: count replies, not entries.
    state.tokens.responses = earlier_replies + len(
        {m.message_id for m in history if isinstance(m, AssistantMessage) and m.usage is not None and not m.is_synthetic}
    )
    for message in reversed(history):
        # The usage of an API compaction request described the messages it replaced.
        if (
            isinstance(message, AssistantMessage)
            and message.usage is not None
            and not message.is_synthetic
            and message.stop_reason != "compaction"
        ):
            state.tokens.last_usage = message.usage
            state.tokens.last_usage_anchor = message.uuid
            mc = state.microcompact
            mc.deleted_tokens_reported = mc.deleted_tokens_baseline = message.usage.cache_deleted_input_tokens
            break
    return state


def cleared_by_claude_code(history: list[Message]) -> list[str]:
    """The tool results the history's `microcompact_boundary` entries name as cleared."""
    ids: list[str] = []
    for message in history:
        if isinstance(message, SystemMessage) and message.subtype == "microcompact_boundary":
            named = message.metadata.get("compactedToolIds")
            if isinstance(named, list):
                ids.extend(i for i in named if isinstance(i, str))
    return ids
