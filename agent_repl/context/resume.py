"""Rebuilding the pipeline's state on resume from the transcript alone (SPEC R2.6).

Replacements are the recorded strings, never recomputed from the files on disk, so a change to
the preview template cannot change bytes the prompt cache has already seen.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent_repl.context.collapse import restore_commits
from agent_repl.context.state import CLEARED_TOOL_RESULT, PinnedCacheEdit, PipelineState
from agent_repl.core.messages import AssistantMessage, Message, UserMessage
from agent_repl.transcript.records import (
    CacheEditRecord,
    CollapseCommitRecord,
    CompactionUndoRecord,
    ContentReplacementRecord,
    MicrocompactClearRecord,
    RewindRecord,
    ServerClearRecord,
    SnipRecord,
)


def rebuild_state(state: PipelineState, history: list[Message], records: Iterable[Any]) -> PipelineState:
    budget, snip, mc = state.budget, state.snip, state.microcompact
    # Everything already in the history was sent (or is about to be, unchanged): frozen unless replaced.
    budget.seen = {b.tool_use_id for m in history if isinstance(m, UserMessage) for b in m.tool_results()}
    collapses: list[CollapseCommitRecord] = []
    for record in records:
        if isinstance(record, ContentReplacementRecord):
            budget.replacements[record.tool_use_id] = record.replacement
        elif isinstance(record, SnipRecord):
            snip.snipped.update(record.uuids)
            snip.tokens_freed_total += record.tokens_freed or 0
        elif isinstance(record, MicrocompactClearRecord):
            for tool_use_id in record.tool_use_ids:
                mc.cleared[tool_use_id] = record.replacement or CLEARED_TOOL_RESULT
            # A time-based clear means the server cache went cold: earlier cache edits are void.
            mc.deleted.clear()
            mc.pinned.clear()
        elif isinstance(record, CompactionUndoRecord):
            state.compaction.undone.add(record.boundary_uuid)
            state.compaction.excluded.update(record.excluded_uuids)
        elif isinstance(record, RewindRecord):
            state.rewound.update(record.excluded_uuids)
        elif isinstance(record, CollapseCommitRecord):
            collapses.append(record)
        elif isinstance(record, CacheEditRecord):
            mc.pinned.append(PinnedCacheEdit(record.anchor_uuid, list(record.tool_use_ids)))
            mc.deleted.update(record.tool_use_ids)
        elif isinstance(record, ServerClearRecord):
            each = (record.tokens_saved or 0) // max(1, len(record.tool_use_ids))
            mc.server_cleared.update(dict.fromkeys(record.tool_use_ids, each))
    restore_commits(state, history, collapses)
    state.tokens.responses = sum(
        1 for m in history if isinstance(m, AssistantMessage) and m.usage is not None and not m.is_synthetic
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
            mc.deleted_tokens_reported = mc.deleted_tokens_baseline = message.usage.cache_deleted_input_tokens
            break
    return state
