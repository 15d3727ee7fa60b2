"""Records: the one way a decision changes the pipeline's state (docs/architecture.md 9.2).

A stage decides and returns records; `apply(state, record)` makes each one part of the state.
The same function runs live (the pipeline applies a stage's records before the next stage runs;
`/snip`, `/uncompact` and `/rewind` apply theirs), on resume (`resume.rebuild_state` replays the
transcript's records in order) and on a copy of the state in a dry run (`/context`, the
`/uncompact` trial), so what a record means is written once, here. A new stage's record type is
a `SideRecord` in `agent_repl.transcript.records` (listed in `BUILTIN_SIDE_RECORDS`) with its
case below.

What changes without a record is bookkeeping that a resume derives instead of replaying:
- `budget.seen`: the results the budget has measured; a resume takes every result in the history.
- the counts of what was freed since the last usage (`snip.tokens_freed_since_usage`,
  `microcompact.freed_since_usage` and `server_freed_since_usage`, `collapse.freed_since_usage`):
  the stage that frees tokens adds to them and the next usage zeroes them; a resume starts them
  at zero from the last usage in the history.
- the usage (`tokens.last_usage` and its anchor, `microcompact.deleted_tokens_*` and
  `server_cleared_reported`): set by each response (`Pipeline.observe_response`) and forgotten
  by a compaction; a resume reads the last usage from the replies in the history, and counts
  the responses (`tokens.responses`) by their message ids. The ratio learned from a usage is a
  record (`TokenRatioRecord`): the estimates that decide what collapses read it, and the history
  cannot give it back. So are the exact counts of long texts (`TokenCountsRecord`): a resume
  could count them again, but only by loading the encoder.
- collapse's `<collapsed>` entries (a cache). Its staged spans are a record
  (`CollapseStageRecord`): which spans a later projection commits depends on them.
- what each projection derives from the history (`pauses`, `cold_after_minutes`, `scratch`,
  `compaction.last`, `tokens.anchor_describes_view`, which each usage sets again: it describes the request it answers).

Records the transcript keeps in less detail than the live run knew carry the rest in fields that
are never written, so the transcript format does not change: a resume splits a
server-clear batch's tokens evenly (`ServerClearRecord.sizes`) and reads a collapsed span's
entries from the history (`CollapseCommitRecord.uuids`, `collapse.with_members`).
"""

from __future__ import annotations

from agent_repl.context.state import CLEARED_TOOL_RESULT, CollapsedSpan, PinnedCacheEdit, PipelineState
from agent_repl.transcript.records import (
    CacheEditRecord,
    CollapseCommitRecord,
    CollapseStageRecord,
    CompactionUndoRecord,
    ContentReplacementRecord,
    MicrocompactClearRecord,
    RewindRecord,
    ServerClearRecord,
    SnipRecord,
    TokenCountsRecord,
    TokenRatioRecord,
)


def apply(state: PipelineState, record: object) -> None:
    """Make `record` part of `state`; any other record (session metadata, notes, unknown types) is
    not the pipeline's and changes nothing."""
    mc = state.microcompact
    match record:
        case ContentReplacementRecord():
            state.budget.replacements[record.tool_use_id] = record.replacement
        case SnipRecord():
            state.snip.snipped.update(record.uuids)
            state.snip.tokens_freed_total += record.tokens_freed or 0
        case MicrocompactClearRecord():
            mc.cleared.update(dict.fromkeys(record.tool_use_ids, record.replacement or CLEARED_TOOL_RESULT))
            # A time-based clear means the server cache went cold: the edits pinned into it are void.
            mc.deleted.clear()
            mc.pinned.clear()
            mc.deleted_tokens_baseline = mc.deleted_tokens_reported = 0
        case CacheEditRecord():
            mc.pinned.append(PinnedCacheEdit(record.anchor_uuid, list(record.tool_use_ids)))
            mc.deleted.update(record.tool_use_ids)
            # The newest edit's own saving is what the next usage reports beyond this.
            mc.deleted_tokens_baseline = mc.deleted_tokens_reported
        case ServerClearRecord():
            sizes = record.sizes
            if sizes is None:
                each = (record.tokens_saved or 0) // max(1, len(record.tool_use_ids))
                sizes = dict.fromkeys(record.tool_use_ids, each)
            mc.server_cleared.update(sizes)
        case CollapseCommitRecord():
            # Read back from the transcript, a commit is first given its entries (`collapse.with_members`).
            if record.uuids is None or record.collapse_id is None:
                raise ValueError(f"collapse commit {record.start_uuid}..{record.end_uuid} names no entries")
            state.collapse.add_commit(
                CollapsedSpan(record.collapse_id, record.start_uuid, record.end_uuid, record.summary, record.uuids)
            )
            # A committed span is no longer a proposal.
            state.collapse.staged = [s for s in state.collapse.staged if s.collapse_id != record.collapse_id]
        case CollapseStageRecord():
            state.collapse.staged = [
                CollapsedSpan(s.collapse_id, s.start_uuid, s.end_uuid, s.summary, frozenset(s.uuids))
                for s in record.spans
            ]
        case TokenRatioRecord():
            state.tokens.ratio = record.ratio
            state.config.token_ratio = record.tokenizer_ratio
        case TokenCountsRecord():
            # A damaged record could under-count a text: its texts are then counted again.
            if record.intact():
                state.facts.learn(record.counts)
        case CompactionUndoRecord():
            state.compaction.undone.add(record.boundary_uuid)
            state.compaction.excluded.update(record.excluded_uuids)
        case RewindRecord():
            state.rewound.update(record.excluded_uuids)
