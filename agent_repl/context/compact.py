"""Compaction (docs/architecture.md 5.6): replace the view with a summary when the cheap stages are not enough.

The loop runs it when the autocompact check asks (agent_repl.context.autocompact), for `/compact`,
and once per turn as reactive recovery from a prompt-too-long error.

First session-memory compaction: the notes extracted in the background become the summary and
a tail of recent messages is kept. Otherwise a full compaction: a forked request that
reuses the cached prefix asks the model for the nine-section summary; if that request is
itself too long, the oldest API rounds are dropped and it is retried, at most 3 times.
After 3 consecutive failures the breaker opens for the rest of the session (the session's
`Compactor`, agent_repl.context.compactor, keeps it and imports this module for its first run).

The result is appended to the history, in order: the boundary, the summary message, the
re-injected attachments. The kept tail stays where it is in the history (before the
boundary); the boundary names where it starts and the projection puts it after the summary.
Nothing is removed from the history, so `undo_last_compaction` can bring the old view back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from agent_repl.context.attachments import (
    error_reminder,
    files_in,
    latest_approved_plan,
    plan_reminder,
    recently_read_files,
    reinjection_budget,
    standing_context,
)
from agent_repl.context.boundary import BoundarySlice
from agent_repl.context.compact_api import api_summary, split_for_kept_turns
from agent_repl.context.compact_prompt import continuation_message, extract_summary, summary_request
from agent_repl.context.compaction_sizes import (
    KEPT_TAIL_MAX_TOKENS,
    CompactionOwner,
    is_typed_prompt,
    kept_tail_budget,
)
from agent_repl.context.context_session import history_for_reminders, take_back_earlier
from agent_repl.context.estimate import estimate_messages, token_count_with_estimation
from agent_repl.context.fork import Wire, WireTransform, fork_request
from agent_repl.context.projector import Pipeline
from agent_repl.context.records import apply
from agent_repl.context.rounds import index_of
from agent_repl.context.session_memory import (
    KEPT_TAIL_MIN_MESSAGES,
    has_reply,
    select_kept_tail,
    uncovered,
    uncovered_limit,
)
from agent_repl.context.shrink import (
    CompactionError,
    drop_oldest_rounds,
    prompt_too_long_gap,
    shrink_by_bytes,
    wire_bytes,
)
from agent_repl.context.skill_reminders import skill_reminders
from agent_repl.context.state import PipelineState
from agent_repl.context.thresholds import autocompact_threshold
from agent_repl.context.touched_files import touched_files_reminder
from agent_repl.context.user_messages import (
    choose_user_messages,
    typed_texts,
    user_messages_budget,
    user_messages_reminder,
)
from agent_repl.core.api.deferred_tools import DISCOVERED_KEY, discovered_tools
from agent_repl.core.api.failures import CUT_OFF_STOP_REASONS, CompactTrigger, is_request_too_large
from agent_repl.core.loop.projection import Projection
from agent_repl.core.model.messages import (
    AssistantMessage,
    CompactionBlock,
    Message,
    SystemMessage,
    TextBlock,
    UserMessage,
)
from agent_repl.core.model.todos import latest_todos, todo_reminder
from agent_repl.transcript.records import CompactionUndoRecord

if TYPE_CHECKING:
    from agent_repl.context.context_session import ContextSession

MAX_PTL_RETRIES = 3
log = logging.getLogger(__name__)


def _reinjection_budget(state: Any) -> int:
    return reinjection_budget(state.config.effective_window, state.config.reinject_share)


@dataclass
class CompactionOutcome:
    ok: bool
    trigger: CompactTrigger
    message: str
    tokens_before: int
    tokens_after: int = 0
    used_session_memory: bool = False
    new_messages: list[Message] = field(default_factory=list)


def kept_tail_start(view: list[Message], state: PipelineState, max_tokens: int = KEPT_TAIL_MAX_TOKENS) -> int | None:
    """Where the kept tail of a full compaction starts: the latest typed prompt, or, when that turn
    is too big, the latest API round that fits; None to keep nothing."""
    starts = [i for i, m in enumerate(view) if is_typed_prompt(m)]
    if starts and estimate_messages(view[starts[-1] :], state) <= max_tokens:
        return starts[-1]
    rounds = [start for start in index_of(view, state).round_starts() if start > 0]
    if rounds:
        return rounds[-1] if estimate_messages(view[rounds[-1] :], state) <= max_tokens else None
    return None


def first_unsent_entry(view: list[Message], state: PipelineState) -> Message | None:
    """The first entry the last main request did not send: its reply (the usage anchor) onwards."""
    anchor = state.tokens.last_usage_anchor
    reply = next((m for m in reversed(view) if m.uuid == anchor), None)
    if not isinstance(reply, AssistantMessage):
        return None
    return view[index_of(view, state).replies[reply.message_id][0]]


class CompactionRun:
    """One compaction of a session's view, for its compactor (which keeps what outlives the run:
    the breaker, the room the last summary took)."""

    def __init__(self, compactor: CompactionOwner) -> None:
        self.compactor = compactor
        self.pipeline = compactor.pipeline
        self.summary_max_tokens = compactor.summary_max_tokens

    async def run(
        self, session: ContextSession, *, trigger: CompactTrigger, instructions: str | None = None, byte_budget: int | None = None
    ) -> CompactionOutcome:
        projection = self.pipeline.project(session.messages, dry_run=True)
        view, before = projection.view, projection.estimated_tokens
        if not any(isinstance(m, AssistantMessage) for m in view):
            return CompactionOutcome(False, trigger, "Nothing to compact yet.", before)
        try:
            # Notes already paid for come first: a summary request on top would pay for it twice.
            outcome = None
            if byte_budget is None and (trigger != "manual" or not instructions):
                outcome = await self._from_session_memory(session, view, before, trigger)
            if outcome is None and self.pipeline.state.config.on_demand_compaction:
                outcome = await self._from_api(session, projection, trigger, instructions, byte_budget)
            if outcome is None:
                outcome = await self._full(session, view, before, trigger, instructions, byte_budget)
        except Exception as exc:  # a failed compaction must never take the session down
            outcome = CompactionOutcome(False, trigger, f"Compaction failed: {exc}", before)
        return outcome

    async def _from_api(
        self,
        session: ContextSession,
        projection: Projection,
        trigger: CompactTrigger,
        instructions: str | None,
        byte_budget: int | None,
    ) -> CompactionOutcome | None:
        """The API's own summary (on-demand compaction); None to fall back to ours."""
        view, before = projection.view, projection.estimated_tokens
        start = kept_tail_start(view, self.pipeline.state, kept_tail_budget(self.pipeline.state))
        kept = view[start] if start is not None else None
        split = split_for_kept_turns(projection, kept)
        kept_tokens = estimate_messages(view[start:], self.pipeline.state) if split < len(projection.wire) else 0
        if before - kept_tokens > self.pipeline.state.config.effective_window:
            return None  # the request would not fit; our own summary request can be shortened
        if byte_budget is not None:
            if wire_bytes(projection.wire[split:]) > byte_budget // 2:
                kept, split = None, len(projection.wire)
            if wire_bytes(projection.wire[:split]) > byte_budget:
                return None  # only our own summary request can shed bytes
        try:
            entry = await api_summary(session, projection, split, instructions, max_tokens=self.summary_max_tokens)
        except Exception as exc:  # too long, too large, refused: our own summary path takes over
            log.info("on-demand compaction failed, summarizing ourselves: %s", exc)
            return None
        kept_from = kept.uuid if kept is not None and split < len(projection.wire) else None
        output = entry.usage.output_tokens if entry.usage is not None else None
        return await self._install(
            session, view, before, trigger, entry, kept_from, source="the API's summary", output_tokens=output
        )

    async def _from_session_memory(
        self, session: ContextSession, view: list[Message], before: int, trigger: CompactTrigger
    ) -> CompactionOutcome | None:
        memory = session.memory
        if memory is None:
            return None
        await memory.wait_for_extraction(timeout=60)
        content, last = memory.content, memory.last_summarized_uuid
        if not content or not last:
            return None
        threshold = autocompact_threshold(self.pipeline.state.config.effective_window)
        rest = uncovered(view, last)
        if rest is None or estimate_messages(rest, self.pipeline.state) > uncovered_limit(threshold):
            return None  # the notes predate this view, or leave too much of it uncovered

        maximum = kept_tail_budget(self.pipeline.state)
        # Notes current up to a new prompt leave nothing of the finished turns to keep verbatim.
        current = not has_reply(rest)
        start = select_kept_tail(
            view,
            last,
            self.pipeline.state,
            min_tokens=0 if current else min(10_000, maximum // 2),
            min_messages=1 if current else KEPT_TAIL_MIN_MESSAGES,
            max_tokens=maximum,
        )
        if start is None:
            return None
        summary = extract_summary(content) or content
        outcome = await self._install(
            session, view, before, trigger, self._summary_entry(session, summary), view[start].uuid,
            used_memory=True, source="session memory",
        )
        if outcome.tokens_after >= threshold:
            await self._undo(session, outcome)
            return None
        return outcome

    async def _full(
        self,
        session: ContextSession,
        view: list[Message],
        tokens_before: int,
        trigger: CompactTrigger,
        instructions: str | None,
        byte_budget: int | None = None,
    ) -> CompactionOutcome:
        state = self.pipeline.state
        question = summary_request(instructions)
        budget = kept_tail_budget(state)
        start = kept_tail_start(view, state, budget)
        if byte_budget is not None and start is not None and _entry_bytes(view[start:], state) > byte_budget // 2:
            start = None  # what is kept verbatim must be light in bytes too
        # What the last request sent is in the cache; what came after it (its reply, new results, a
        # new prompt) is kept verbatim in the tail, so it need not be summarized and the summary
        # request writes nothing but its question.
        cut = first_unsent_entry(view, state)
        unsent = view.index(cut) if cut is not None else None
        earlier = min(start, unsent) if unsent is not None and start is not None else None
        if earlier is not None and estimate_messages(view[earlier:], state) <= budget:
            start = earlier
        elif (
            byte_budget is None
            and unsent is not None
            and start is None
            and estimate_messages(view[unsent:], state) <= state.config.effective_window // 2
        ):
            # One round too big for the tail: keep what the last request did not send anyway, so
            # the summary request is that request (which fitted) rather than more than the window.
            start = unsent
        else:
            cut = None
        fork = partial(
            fork_request,
            session,
            question,
            max_tokens=self.summary_max_tokens,
            before_uuid=cut.uuid if cut is not None else None,
        )
        transform: WireTransform | None = None
        if byte_budget is not None:
            cut = None
            fork = partial(fork_request, session, question, max_tokens=self.summary_max_tokens)

            def within_budget(wire: Wire) -> Wire:
                return shrink_by_bytes(wire, session.tool_results_dir, byte_budget)

            transform = within_budget
        else:
            transform = self._room_for_the_summary(view, tokens_before, cut, question)

        for attempt in range(MAX_PTL_RETRIES + 1):
            too_large = False
            try:
                memory = session.memory
                if memory is not None:
                    async with memory.paused():
                        response = await fork(transform=transform)
                else:
                    response = await fork(transform=transform)
            except Exception as exc:
                too_large = is_request_too_large(exc)
                if not (too_large or "prompt is too long" in str(exc)) or attempt == MAX_PTL_RETRIES:
                    raise
                gap = prompt_too_long_gap(exc)
            else:
                if response.stop_reason not in CUT_OFF_STOP_REASONS:
                    self.compactor.summary_output_tokens = response.usage.output_tokens
                    text = "".join(b.text for b in response.content if isinstance(b, TextBlock))
                    summary = extract_summary(text)
                    if not summary:
                        return CompactionOutcome(
                            False, trigger, "Compaction failed: the summary came back empty.", tokens_before
                        )
                    return await self._install(
                        session,
                        view,
                        tokens_before,
                        trigger,
                        self._summary_entry(session, summary),
                        view[start].uuid if start else None,
                        output_tokens=response.usage.output_tokens,
                    )
                # A summary cut off (at the window's edge, or the output cap) would lose what it
                # had not reached yet, such as the later user messages: make room and ask again.
                if attempt == MAX_PTL_RETRIES:
                    raise CompactionError(f"the summary was cut off ({response.stop_reason}) every time")
                # It needs more than it had: the next compaction leaves it more from the start.
                self.compactor.summary_output_tokens = max(
                    self.compactor.summary_output_tokens, response.usage.output_tokens * 3 // 2
                )
                gap = None
            previous = transform

            def smaller(
                wire: Wire, previous: WireTransform | None = previous, gap: int | None = gap, too_large: bool = too_large
            ) -> Wire:
                wire = previous(wire) if previous else wire
                if too_large:
                    return shrink_by_bytes(wire, session.tool_results_dir)
                # The estimate of what a round frees runs high (JSON escapes): ask it for more.
                margin = None if gap is None else round(gap * 1.5) + state.config.effective_window // 100
                return drop_oldest_rounds(wire, margin, lambda m: _wire_tokens(m, state))

            transform = smaller

        raise CompactionError("unreachable")

    def _room_for_the_summary(
        self, view: list[Message], tokens_before: int, cut: Message | None, question: str
    ) -> WireTransform | None:
        """Drop the oldest rounds before the first summary request when its input and the reply it
        needs would not both fit in the window, instead of asking twice (a reply cut off at the
        window's edge is asked again with room)."""
        state = self.pipeline.state
        unsent = estimate_messages(view[view.index(cut) :], state) if cut is not None else 0
        asked = tokens_before - unsent + round(state.facts.text_tokens(question) * state.tokens.ratio)
        gap = asked + self.compactor.summary_room() - state.config.context_window
        if gap <= 0:
            return None
        margin = round(gap * 1.5) + state.config.effective_window // 100

        def with_room(wire: Wire) -> Wire:
            return drop_oldest_rounds(wire, margin, lambda m: _wire_tokens(m, state))

        return with_room

    @staticmethod
    def _summary_entry(session: ContextSession, summary: str) -> UserMessage:
        return UserMessage(
            content=continuation_message(summary, str(getattr(session.sink, "path", "")) or None),
            is_compact_summary=True,
        )

    async def _install(
        self,
        session: ContextSession,
        view: list[Message],
        before: int,
        trigger: CompactTrigger,
        summary_message: Message,
        kept_from: str | None,
        *,
        used_memory: bool = False,
        source: str = "a summary",
        output_tokens: int | None = None,
    ) -> CompactionOutcome:
        """`output_tokens`: what the model's summary took to write (none for session memory), kept on
        the boundary for the cost-aware trigger's next estimate (context/autocompact.py)."""
        state = self.pipeline.state
        kept_index = next((i for i, m in enumerate(view) if m.uuid == kept_from), len(view))
        kept = view[kept_index:]
        files = recently_read_files(view[:kept_index], kept, state, session.permissions)
        # The todo list and the plan as the whole session left them: after an earlier compaction the
        # call that wrote them is no longer in the view, only its re-injected reminder.
        whole = history_for_reminders(session)
        history = [m for m in whole if m.uuid not in state.rewound]
        standing = (
            standing_context(whole, kept),
            *(f.text for f in files),
            *skill_reminders(view[:kept_index], kept, state, _reinjection_budget(state)),
            todo_reminder(latest_todos(history)),
            plan_reminder(latest_approved_plan(history)),
            touched_files_reminder(whole, kept) if state.config.list_touched_files else "",
            error_reminder(view[:kept_index], kept, _summary_text(summary_message)),
            _user_messages(session, whole, state, kept, summary_message),
        )
        attachments = [UserMessage(content=text, is_meta=True) for text in standing if text]
        boundary = SystemMessage(
            subtype="compact_boundary",
            content="Conversation compacted",
            metadata={
                "trigger": trigger,
                "preTokens": before,
                DISCOVERED_KEY: discovered_tools(view),
                "keptFromUuid": kept_from,
                "summaryUuid": summary_message.uuid,
                "attachmentUuids": [a.uuid for a in attachments],
                "usedSessionMemory": used_memory,
                "apiSummary": isinstance(summary_message, AssistantMessage),
                **({"summaryOutputTokens": output_tokens} if output_tokens else {}),
            },
            logical_parent_uuid=session.last_uuid,
        )
        new_messages: list[Message] = [boundary, summary_message, *attachments]
        # One write: a boundary on disk without its summary would cut the earlier context off.
        await session.append_many(new_messages)
        # What the model has seen exactly is now the kept tail and the re-injected files.
        session.files.retain(set(files_in(kept)))
        for reinjected in files:
            session.files.record(reinjected.path)
        # The prefix the cached edits pointed into is gone; their counts restart with the new prefix.
        state.microcompact.deleted_tokens_reported = state.microcompact.deleted_tokens_baseline = 0
        state.microcompact.server_cleared_reported = 0
        # The last usage described the old view; until the next reply, estimate the new one afresh.
        state.tokens.last_usage = None
        state.tokens.last_usage_anchor = None
        after_projection = self.pipeline.project(session.messages, dry_run=True)
        after = token_count_with_estimation(after_projection.view, state)
        message = f"Compacted the conversation ({trigger}) into {source}: ~{before:,} -> ~{after:,} tokens."
        return CompactionOutcome(True, trigger, message, before, after, used_memory, new_messages)

    async def _undo(self, session: ContextSession, outcome: CompactionOutcome) -> None:
        boundary = outcome.new_messages[0]
        record = CompactionUndoRecord(boundary_uuid=boundary.uuid, excluded_uuids=[m.uuid for m in outcome.new_messages])
        apply(self.pipeline.state, record)
        await session.append_record(record)


def _summary_text(summary_message: Message) -> str:
    if isinstance(summary_message, AssistantMessage):
        return "\n".join(b.content or "" for b in summary_message.content if isinstance(b, CompactionBlock))
    return summary_message.text() if isinstance(summary_message, UserMessage) else ""


def _user_messages(
    session: ContextSession, history: list[Message], state: PipelineState, kept: list[Message], summary_message: Message
) -> str:
    """The reminder of what the user typed in the session, outside the kept tail and the summary's quotes."""
    transcript = str(getattr(session.sink, "path", "")) or None
    skip = {m.uuid for m in kept} | set(state.rewound)
    chosen, left_out = choose_user_messages(
        typed_texts(history, skip),
        user_messages_budget(state.config.effective_window, state.config.user_messages_share),
        lambda text: round(state.facts.text_tokens(text) * state.tokens.ratio),
        quoted_in=_summary_text(summary_message),
        transcript_path=transcript,
    )
    return user_messages_reminder(chosen, left_out, transcript)


def _entry_bytes(entries: list[Message], state: PipelineState) -> int:
    return sum(wire_bytes(list(state.facts.get(m).wire_blocks)) for m in entries)


def _wire_tokens(message: dict[str, Any], state: PipelineState) -> int:
    import json

    return round(state.facts.text_tokens(json.dumps(message["content"], ensure_ascii=False)) * state.tokens.ratio)


def last_active_boundary(history: list[Message], state: PipelineState) -> SystemMessage | None:
    for message in reversed(history):
        if (
            isinstance(message, SystemMessage)
            and message.subtype == "compact_boundary"
            and message.uuid not in state.compaction.undone
        ):
            return message
    return None


async def undo_last_compaction(session: ContextSession, pipeline: Pipeline) -> tuple[bool, str]:
    """Bring back the view from before the last compaction (a record; the history never changed)."""
    state = pipeline.state
    boundary = last_active_boundary(session.messages, state)
    if boundary is None:
        return False, "There is no compaction to undo."
    # The view before it reaches back into what a resume left in the transcript.
    take_back_earlier(session)
    excluded = [boundary.uuid, str(boundary.metadata.get("summaryUuid") or ""), *boundary.metadata.get("attachmentUuids", [])]
    record = CompactionUndoRecord(boundary_uuid=boundary.uuid, excluded_uuids=[u for u in excluded if u])
    # The trial: the boundary slice alone, on a copy of the state with the undo applied.
    trial = state.copy()
    apply(trial, record)
    tokens = estimate_messages(Pipeline([BoundarySlice()]).preview(session.messages, trial).view, trial)
    if tokens >= state.config.effective_window:
        return False, (
            f"Cannot undo: the conversation before that compaction is ~{tokens:,} tokens, more than fits "
            f"({state.config.effective_window:,})."
        )
    apply(state, record)
    await session.append_record(record)
    return True, f"Undid the last compaction; the model sees the earlier conversation again (~{tokens:,} tokens)."
