"""The compact-boundary slice (docs/architecture.md 5.1): the first stage, the history as the model may see it.

The last active compact boundary and what follows it, with the kept tail the boundary names put
back right after its summary (ours name where the tail starts, `keptFromUuid`; Claude Code 2.1.3xx
names the entries it carried over, `preservedMessages.uuids`, or their span, `preservedSegment`
from `headUuid` to `tailUuid`; either way those entries sit before the boundary); then snipped entries, undone compactions, rewound entries and
refused replies are filtered out. The history itself is never changed.
"""

from __future__ import annotations

from agent_repl.context.stage import Stage, StageOutcome
from agent_repl.context.state import LastCompaction, PipelineState
from agent_repl.core.model.messages import AssistantMessage, Message, SystemMessage


def _is_active_boundary(message: Message, undone: frozenset[str] | set[str]) -> bool:
    return isinstance(message, SystemMessage) and message.subtype == "compact_boundary" and message.uuid not in undone


def _previous_boundary(history: list[Message], before: int, undone: frozenset[str] | set[str]) -> int | None:
    for index in range(before - 1, -1, -1):
        if _is_active_boundary(history[index], undone):
            return index
    return None


def _carried_over(history: list[Message], boundary: SystemMessage, floor: int, index: int) -> list[Message] | None:
    """The entries a Claude Code boundary says it carried over, in history order; None when it names none."""
    preserved = boundary.metadata.get("preservedMessages")
    uuids = preserved.get("uuids") if isinstance(preserved, dict) else None
    if isinstance(uuids, list) and uuids:
        named = {u for u in uuids if isinstance(u, str)}
        return [m for m in history[floor:index] if m.uuid in named and not isinstance(m, SystemMessage)]
    segment = boundary.metadata.get("preservedSegment")
    if not isinstance(segment, dict):
        return None
    at = {m.uuid: i for i, m in enumerate(history[floor:index], start=floor)}
    head, tail = at.get(segment.get("headUuid") or ""), at.get(segment.get("tailUuid") or "")
    if head is None or tail is None or head > tail:
        return None
    return [m for m in history[head : tail + 1] if not isinstance(m, SystemMessage)]


def _view_at(history: list[Message], index: int, end: int, undone: frozenset[str] | set[str]) -> list[Message]:
    """The view of `history[:end]` whose last active boundary is at `index`."""
    boundary = history[index]
    after = history[index:end]
    if not isinstance(boundary, SystemMessage):
        return after
    previous = _previous_boundary(history, index, undone)
    floor = previous + 1 if previous is not None else 0
    carried = _carried_over(history, boundary, floor, index)
    kept_from = boundary.metadata.get("keptFromUuid")
    if carried is None and not kept_from:
        return after
    start = next((i for i in range(index - 1, floor - 1, -1) if history[i].uuid == kept_from), None)
    if carried is not None:
        kept = carried
    elif start is not None:
        kept = [m for m in history[start:index] if not isinstance(m, SystemMessage)]
    elif previous is not None:
        # The kept tail reaches into an earlier compaction's view: take it from that view.
        earlier = _view_at(history, previous, index, undone)
        position = next((i for i, m in enumerate(earlier) if m.uuid == kept_from), len(earlier))
        kept = [m for m in earlier[position:] if not isinstance(m, SystemMessage)]
    else:
        kept = []
    summary_uuid = boundary.metadata.get("summaryUuid")
    summary_at = next(
        (i for i, m in enumerate(after) if m.uuid == summary_uuid or getattr(m, "is_compact_summary", False)), 0
    )
    return [*after[: summary_at + 1], *kept, *after[summary_at + 1 :]]


def slice_after_compact_boundary(history: list[Message], undone: frozenset[str] | set[str] = frozenset()) -> list[Message]:
    """The last compact boundary and everything after it, with the kept tail the
    boundary names (entries of the view before it) placed right after its summary."""
    index = _previous_boundary(history, len(history), undone)
    if index is None:
        return list(history)
    return _view_at(history, index, len(history), undone)


def last_compaction(history: list[Message], undone: frozenset[str] | set[str] = frozenset()) -> LastCompaction | None:
    """What the last active compaction left (the cost-aware trigger's memory of it); None without one.

    The main replies after its boundary are counted by message id (a reply is stored one entry per
    block); the API's summary (stop reason "compaction") is not one of them. The first one's usage
    measures the compacted view; the boundary names its summary's output tokens
    (`summaryOutputTokens`) when a model call wrote it."""
    index = _previous_boundary(history, len(history), undone)
    if index is None:
        return None
    replies: list[AssistantMessage] = []
    seen: set[str] = set()
    for message in history[index + 1 :]:
        if (
            isinstance(message, AssistantMessage)
            and message.usage is not None
            and not message.is_synthetic
            and message.stop_reason != "compaction"
            and message.message_id not in seen
        ):
            seen.add(message.message_id)
            replies.append(message)
    boundary = history[index]
    output = boundary.metadata.get("summaryOutputTokens") if isinstance(boundary, SystemMessage) else None
    after = replies[0].usage.total_input() if replies and replies[0].usage is not None else None
    return LastCompaction(after, len(replies), output if isinstance(output, int) and output > 0 else None)


def is_refused(message: Message) -> bool:
    """A reply the model refused: shown in the history, never sent back."""
    return isinstance(message, AssistantMessage) and message.stop_reason == "refusal"


class BoundarySlice(Stage):
    """The last compact boundary onward, then snipped entries, undone compactions, rewound
    entries and refused replies filtered out."""

    name = "boundary"

    def apply(self, view: list[Message], state: PipelineState) -> StageOutcome:
        compaction = state.compaction
        sliced = slice_after_compact_boundary(view, compaction.undone)
        compaction.last = last_compaction(view, compaction.undone)
        hidden = state.snip.snipped
        if compaction.excluded or state.rewound:
            hidden = hidden | compaction.excluded | state.rewound
        kept = [m for m in sliced if m.uuid not in hidden and not is_refused(m)]
        return StageOutcome(kept, items=len(view) - len(kept), detail=f"{len(view) - len(kept)} entries before or snipped")
