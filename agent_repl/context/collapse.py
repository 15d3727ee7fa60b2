"""Context collapse (docs/architecture.md 5.5): old spans of the view shown as short summaries. Zero model calls.

A read-time projection. The commit log (spans from a start uuid to an end uuid) lives in the
pipeline state and in the transcript; every projection replaces each committed span with one
user entry, `<collapsed>summary</collapsed>`, whose uuid (and so its `[id:]` tag) derives from
the span, so its bytes are the same on every turn and after a resume. The history is untouched.

Spans are whole API rounds: a tool_use never leaves without its tool_result, nor part of one
streamed reply (`message_id`). Never the current turn, the session's opening context, a compact
summary, or what snip or a compaction already took away. Summaries are extractive: every typed
user message verbatim, each tool call with its key input and a one-line outcome, the
assistant's text abbreviated.

From 80% of the effective window the oldest eligible spans are staged; from 90% staged spans
are committed, oldest first, until the count is back under 90%. Both are records (staging
decides what a later projection commits), so a resumed session stages and commits as the live
one would have. On prompt-too-long the loop drains every staged span first (`drain_staged`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_repl.context.collapse_spans import (
    candidate_spans,
    collapse_id_for,
    is_barrier,
    placeholder_for,
    placeholder_uuid,
    span_saving,
)
from agent_repl.context.estimate import (
    estimate_messages,
    estimate_request,
    last_usage_index,
    token_count_with_estimation,
)
from agent_repl.context.records import apply
from agent_repl.context.stage import Stage, StageOutcome
from agent_repl.context.state import CollapsedSpan, PipelineState
from agent_repl.core.model.messages import Message, SystemMessage, UserMessage
from agent_repl.transcript.records import CollapseCommitRecord, CollapseStageRecord, StagedSpan

STAGE_AT = 0.80
COMMIT_AT = 0.90
# Staging proposes enough spans that committing them all would bring the count down to this share.
STAGE_DOWN_TO = 0.70


# --- Thresholds: pure functions of numbers ----------------------------------------------------


def should_stage(tokens: int, effective: int) -> bool:
    return tokens >= STAGE_AT * effective


def should_commit(tokens: int, effective: int) -> bool:
    return tokens >= COMMIT_AT * effective


# --- Projection -------------------------------------------------------------------------------


@dataclass
class Projected:
    view: list[Message]
    removed: list[Message]
    added: list[Message]


def project_commits(view: list[Message], state: PipelineState) -> Projected:
    """Each committed span's entries leave the view; its `<collapsed>` entry takes the first one's place.

    Works on a view that is already projected too (its spans are simply absent then).
    """
    collapse = state.collapse
    if not collapse.owner:
        return Projected(view, [], [])
    spans = {span.collapse_id: span for span in collapse.commits}
    shown = {placeholder_for(span, collapse.placeholders).uuid: cid for cid, span in spans.items()}
    emitted: set[str] = set()
    out: list[Message] = []
    removed: list[Message] = []
    added: list[Message] = []
    for message in view:
        owner = collapse.owner.get(message.uuid)
        if owner is None:
            if message.uuid in shown:  # the view was projected already
                emitted.add(shown[message.uuid])
            out.append(message)
            continue
        removed.append(message)
        if owner in emitted:
            continue
        emitted.add(owner)
        placeholder = placeholder_for(spans[owner], collapse.placeholders)
        # A `<collapsed>` entry the model or the user snipped stays out (its span does too).
        if placeholder.uuid not in state.snip.snipped:
            out.append(placeholder)
            added.append(placeholder)
    return Projected(out, removed, added)


def _replace_span(view: list[Message], span: CollapsedSpan, placeholder: UserMessage) -> Projected:
    out: list[Message] = []
    removed: list[Message] = []
    for message in view:
        if message.uuid in span.uuids:
            if not removed:
                out.append(placeholder)
            removed.append(message)
        else:
            out.append(message)
    return Projected(out, removed, [placeholder] if removed else [])


# --- Staging ----------------------------------------------------------------------------------


def stage_spans(
    view: list[Message],
    state: PipelineState,
    staged: list[CollapsedSpan],
    tokens: int,
    target: float,
    *,
    everything: bool = False,
    partial: bool = True,
) -> list[CollapsedSpan]:
    """`staged` plus the oldest eligible spans until committing them all would bring `tokens`
    under `target` (or every eligible span, with `everything`)."""
    by_uuid = {m.uuid: m for m in view}
    pending = sum(span_saving(span, by_uuid, state) for span in staged)
    taken = {u for span in staged for u in span.uuids}
    out = list(staged)
    if not everything and tokens - pending < target:
        return out
    for span, saving in candidate_spans(view, state, taken, partial=partial):
        out.append(span)
        pending += saving
        if not everything and tokens - pending < target:
            break
    return out


# --- Commits ----------------------------------------------------------------------------------


@dataclass
class CommitStep:
    view: list[Message]
    span: CollapsedSpan
    placeholder: UserMessage
    tokens_before: int
    tokens_after: int
    saved: int
    # The part of `saved` the last API usage counted (entries up to its reply).
    freed_in_usage: int


def commit_step(view: list[Message], span: CollapsedSpan, tokens: int, state: PipelineState) -> CommitStep:
    """What committing `span` does to `view` and to the token count; changes no state."""
    placeholder = placeholder_for(span)
    anchor = last_usage_index(view, state)
    replaced = _replace_span(view, span, placeholder)
    saved = estimate_messages(replaced.removed, state) - estimate_messages(replaced.added, state)
    if anchor is not None and view[anchor].uuid in span.uuids:
        # The usage's own reply is collapsed: the count falls back to an estimate of the whole view.
        after = estimate_request(replaced.view, state)
        return CommitStep(replaced.view, span, placeholder, tokens, after, saved, 0)
    in_usage = 0
    if anchor is not None and replaced.removed:
        positions = {m.uuid: i for i, m in enumerate(view[: anchor + 1])}
        counted = [m for m in replaced.removed if m.uuid in positions]
        in_usage = estimate_messages(counted, state) - (
            estimate_messages(replaced.added, state) if counted else 0
        )
    return CommitStep(replaced.view, span, placeholder, tokens, tokens - saved, saved, in_usage)


def record_commit(state: PipelineState, step: CommitStep) -> CollapseCommitRecord:
    """The record of the commit; its `<collapsed>` entry is cached and what it frees from the last
    usage's count is counted until the next usage."""
    collapse = state.collapse
    # The entry this view already holds, so later projections reuse the same object.
    collapse.placeholders[step.span.collapse_id] = step.placeholder
    anchor = state.tokens.last_usage_anchor
    if collapse.freed_anchor != anchor:
        collapse.freed_anchor, collapse.freed_since_usage = anchor, 0
    collapse.freed_since_usage += step.freed_in_usage
    span = step.span
    return CollapseCommitRecord(
        collapse_id=span.collapse_id,
        start_uuid=span.start_uuid,
        end_uuid=span.end_uuid,
        summary=span.summary,
        tokens_before=step.tokens_before,
        tokens_after=step.tokens_after,
        uuids=span.uuids,
    )


def _still_present(span: CollapsedSpan, uuids: set[str]) -> bool:
    return placeholder_uuid(span.collapse_id) in uuids or any(u in uuids for u in span.uuids)


def _oldest_first(spans: list[CollapsedSpan], view: list[Message]) -> list[CollapsedSpan]:
    position = {m.uuid: i for i, m in enumerate(view)}
    return sorted(
        spans, key=lambda s: min((position[u] for u in s.uuids if u in position), default=len(view))
    )


class CollapseStage(Stage):
    """Projects the committed spans; stages from 80% and commits from 90% of the effective window."""

    name = "collapse"

    def apply(self, view: list[Message], state: PipelineState) -> StageOutcome:
        config, collapse = state.config, state.collapse
        if config.strategy != "collapse":
            return StageOutcome(view)
        projected = project_commits(view, state)
        view = projected.view
        saved = estimate_messages(projected.removed, state) - estimate_messages(projected.added, state)
        effective = config.effective_window
        tokens = token_count_with_estimation(view, state)
        uuids = {m.uuid for m in view}
        staged = _oldest_first([s for s in collapse.staged if _still_present(s, uuids)], view)
        if should_stage(tokens, effective):
            staged = stage_spans(view, state, staged, tokens, STAGE_DOWN_TO * effective, partial=False)
        steps: list[CommitStep] = []
        while should_commit(tokens, effective):
            if not staged:
                staged = stage_spans(view, state, [], tokens, COMMIT_AT * effective)
                if not staged:
                    break
            step = commit_step(view, staged.pop(0), tokens, state)
            steps.append(step)
            view, tokens, saved = step.view, step.tokens_after, saved + step.saved
        shown = len(projected.added) + len(steps)
        records: list[Any] = [record_commit(state, step) for step in steps]
        committed = {step.span.collapse_id for step in steps}
        if [s.collapse_id for s in staged] != [s.collapse_id for s in collapse.staged if s.collapse_id not in committed]:
            records.append(stage_record(staged))
        return StageOutcome(
            view,
            saved_tokens=saved,
            items=shown,
            detail=f"{shown} spans collapsed ({len(steps)} new), {len(staged)} staged",
            records=records,
        )

    def recover(self, view: list[Message], state: PipelineState) -> list[Any]:
        return list(drain_staged(view, state))


def stage_record(staged: list[CollapsedSpan]) -> CollapseStageRecord:
    """The record that makes `staged` the staged list (live, on resume and in a dry run)."""
    return CollapseStageRecord(
        spans=[
            StagedSpan(
                collapse_id=s.collapse_id,
                start_uuid=s.start_uuid,
                end_uuid=s.end_uuid,
                summary=s.summary,
                uuids=sorted(s.uuids),
            )
            for s in staged
        ]
    )


def drain_staged(view: list[Message], state: PipelineState) -> list[CollapseCommitRecord | CollapseStageRecord]:
    """Prompt-too-long recovery: commit every staged span now; when none is staged, stage
    every eligible span older than the current turn first. Returns the records for the caller to
    write, [] when nothing could be collapsed."""
    config, collapse = state.config, state.collapse
    if config.strategy != "collapse":
        return []
    view = project_commits(view, state).view
    tokens = token_count_with_estimation(view, state)
    uuids = {m.uuid for m in view}
    staged = _oldest_first([s for s in collapse.staged if _still_present(s, uuids)], view)
    if not staged:
        staged = stage_spans(view, state, [], tokens, 0, everything=True)
    records: list[CollapseCommitRecord | CollapseStageRecord] = []
    for span in staged:
        step = commit_step(view, span, tokens, state)
        records.append(record_commit(state, step))
        apply(state, records[-1])
        view, tokens = step.view, step.tokens_after
    if records and collapse.staged:  # spans no longer in the view
        records.append(stage_record([]))
        apply(state, records[-1])
    return records


def with_members(record: CollapseCommitRecord, history: list[Message]) -> CollapseCommitRecord | None:
    """A commit read back from the transcript, with the history entries from its start to its end
    and its id (None when the history no longer holds them in order)."""
    if record.uuids is not None and record.collapse_id is not None:
        return record
    positions = {m.uuid: i for i, m in enumerate(history)}
    start, end = positions.get(record.start_uuid), positions.get(record.end_uuid)
    if start is None or end is None or end < start:
        return None
    members = frozenset(
        m.uuid for m in history[start : end + 1] if not isinstance(m, SystemMessage) and not is_barrier(m)
    )
    collapse_id = record.collapse_id or collapse_id_for(record.start_uuid, record.end_uuid)
    return record.model_copy(update={"uuids": members, "collapse_id": collapse_id})
