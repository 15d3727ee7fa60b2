"""Microcompact (docs/architecture.md 5.4): clearing old tool results, in one of three ways.

1. Time-based: when the last reply is older than the cache TTL gap, the server cache is cold
   anyway, so the content of every clearable result but the most recent few becomes
   `[Old tool result content cleared]`. A deliberate prefix break, recorded, and it resets
   the cached registry (the entries those edits pointed at are gone). With `clear_on_resume`
   off, the gap between a resumed session's last reply and its first request does not count.
2. Cached (cache editing, only where the endpoint advertises it, main thread only): the view
   is unchanged; old results are deleted from the server's cached prefix by a `cache_edits`
   block pinned to the message where it was first sent, so no byte the cache has seen moves.
   It runs when more than `cached_trigger` results are live, or when they fill more than
   `cached_trigger_share` of the effective window (a small window never holds many results).
3. Otherwise the public `context_management` edits: thinking is kept, or only the last turn's
   after an idle hour, where the model thinks; and, only while autocompact is off, the server clears old tool
   uses past a trigger. Once past its trigger that edit clears one more result on every request,
   so the cache is written again from there each time (the replay benchmark measured +51% cost
   units at 200K with it beside autocompact); with autocompact on, the compaction is the cheaper
   way to stay in the window.

With cache editing, the stage also marks the wire (`decorate`: `cache_reference` on clearable
results, each pinned `cache_edits` block where it was first sent), and only the API can say what
its deletes saved, so its boundary entry comes from the usage (`observe`).
"""

from __future__ import annotations

from datetime import datetime

from agent_repl.context.budget import replace_results, tool_names
from agent_repl.context.estimate import text_cl100k
from agent_repl.context.normalize import WireDraft
from agent_repl.context.rounds import index_of
from agent_repl.context.server_clear import clear_edit, plan_batch, record_batch
from agent_repl.context.stage import Stage, StageOutcome
from agent_repl.context.state import CLEARED_TOOL_RESULT, PipelineState
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ThinkingBlock,
    Usage,
    UserMessage,
)
from agent_repl.transcript.records import CacheEditRecord, MicrocompactClearRecord, ServerClearRecord


def _parse_time(timestamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def last_reply(view: list[Message]) -> AssistantMessage | None:
    return next((m for m in reversed(view) if isinstance(m, AssistantMessage) and not m.is_synthetic), None)


def minutes_since_last_reply(view: list[Message], now: datetime) -> float | None:
    reply = last_reply(view)
    when = _parse_time(reply.timestamp) if reply is not None else None
    return None if when is None else (now - when).total_seconds() / 60


def _gap_is_the_resumes(view: list[Message], state: PipelineState) -> bool:
    """With `clear_on_resume` off: the view's last reply is the one the session was resumed after."""
    reply = last_reply(view)
    resumed = state.microcompact.resumed_after
    return not state.config.clear_on_resume and resumed is not None and reply is not None and reply.uuid == resumed


def clearable_results(view: list[Message], state: PipelineState) -> list[tuple[int, str]]:
    """(entry index, tool_use_id) of every clearable tool result in the view, oldest first."""
    return state.memo("clearable", view, lambda: _find_clearable(view, state))


def _find_clearable(view: list[Message], state: PipelineState) -> list[tuple[int, str]]:
    names = tool_names(view, state)
    clearable = state.config.clearable_tools
    found = []
    for index, message in enumerate(view):
        if isinstance(message, UserMessage):
            for tool_use_id in state.facts.get(message).result_ids:
                if names.get(tool_use_id) in clearable:
                    found.append((index, tool_use_id))
    return found


def apply_clears(view: list[Message], cleared: dict[str, str]) -> list[Message]:
    if not cleared:
        return view
    return [
        replace_results(m, cleared)
        if isinstance(m, UserMessage) and any(b.tool_use_id in cleared for b in m.tool_results())
        else m
        for m in view
    ]


def _result_tokens(message: Message, tool_use_id: str, state: PipelineState) -> int:
    """cl100k tokens of one tool result, found in the entry that holds it."""
    assert isinstance(message, UserMessage)
    return next((text_cl100k(b.text(), state) for b in message.tool_results() if b.tool_use_id == tool_use_id), 0)


# The size rule never deletes the newest few results, however large.
MIN_KEPT_BY_SIZE = 3


class Microcompact(Stage):
    name = "microcompact"

    def apply(self, view: list[Message], state: PipelineState) -> StageOutcome:
        config, mc = state.config, state.microcompact
        gap = minutes_since_last_reply(view, state.clock())
        # With clear_on_resume off, the gap a resume makes does not count as a cold cache.
        cold = gap is not None and gap >= state.cold_after_minutes and not _gap_is_the_resumes(view, state)
        public = not (config.cache_editing and config.main_thread)
        # On the public path with server-side clears, a cold cache is their cue, not ours.
        if cold and not (public and config.server_clear and config.main_thread):
            outcome = self._time_based(view, state)
            if outcome is not None:
                return outcome
        view = apply_clears(view, mc.cleared)
        if not public:
            return self._cached(view, state)
        if config.api_context_management:
            return self._api_edits(view, state, idle_minutes=gap, cold=cold)
        return StageOutcome(view)

    def _time_based(self, view: list[Message], state: PipelineState) -> StageOutcome | None:
        config, mc = state.config, state.microcompact
        results = clearable_results(view, state)
        keep = {tool_use_id for _, tool_use_id in results[-config.keep_recent_tool_results :]} if (
            config.keep_recent_tool_results
        ) else set()
        clear_at = [(index, tid) for index, tid in results if tid not in keep and tid not in mc.cleared]
        to_clear = [tid for _, tid in clear_at]
        if not to_clear:
            return None
        saved = sum(_result_tokens(view[index], tid, state) for index, tid in clear_at)
        cleared = {**mc.cleared, **{tid: CLEARED_TOOL_RESULT for tid in to_clear}}
        new_view = apply_clears(view, cleared)
        saved_tokens = round(saved * state.tokens.ratio)
        outcome = StageOutcome(new_view, saved_tokens=saved_tokens, items=len(to_clear), detail="time-based clear")
        mc.freed_since_usage += saved_tokens
        outcome.records.append(
            MicrocompactClearRecord(
                tool_use_ids=to_clear, replacement=CLEARED_TOOL_RESULT, trigger="time", tokens_saved=saved_tokens
            )
        )
        outcome.new_messages.append(
            SystemMessage(
                subtype="microcompact_boundary",
                content="Context microcompacted",
                metadata={
                    "trigger": "auto",
                    "preTokens": None,
                    "tokensSaved": saved_tokens,
                    "compactedToolIds": to_clear,
                    "clearedAttachmentUUIDs": [],
                },
            )
        )
        return outcome

    def _cached(self, view: list[Message], state: PipelineState) -> StageOutcome:
        config, mc = state.config, state.microcompact
        groups = index_of(view, state).wire_groups()
        unsent = set(groups[-1]) if groups else set()
        live_at = [
            (index, tid)
            for index, tid in clearable_results(view, state)
            if index not in unsent and tid not in mc.deleted and tid not in mc.cleared
        ]
        live = [tid for _, tid in live_at]
        sizes = {tid: _result_tokens(view[index], tid, state) for index, tid in live_at} if config.cached_trigger_share else {}
        live_tokens = round(sum(sizes.values()) * state.tokens.ratio)
        by_size = config.cached_trigger_share and live_tokens > config.cached_trigger_share * config.effective_window
        if not view or (len(live) <= config.cached_trigger and not by_size):
            return StageOutcome(view, detail=f"{len(mc.deleted)} deleted from the cache")
        to_delete = live[: len(live) - config.cached_keep] if len(live) > config.cached_trigger else []
        if by_size:
            # Oldest first, until what stays live is under the keep share (the newest few always stay).
            target = config.cached_keep_share * config.effective_window
            count, remaining = 0, live_tokens
            for tid in live[: len(live) - MIN_KEPT_BY_SIZE]:
                if remaining <= target:
                    break
                remaining -= round(sizes[tid] * state.tokens.ratio)
                count += 1
            if count > len(to_delete):
                to_delete = live[:count]
        if not to_delete:
            return StageOutcome(view, detail=f"{len(mc.deleted)} deleted from the cache")
        where = {tid: index for index, tid in live_at}
        saved = round(sum(_result_tokens(view[where[tid]], tid, state) for tid in to_delete) * state.tokens.ratio)
        mc.freed_since_usage += saved
        record = CacheEditRecord(anchor_uuid=view[-1].uuid, tool_use_ids=list(to_delete))
        return StageOutcome(view, saved_tokens=saved, items=len(to_delete), detail="cache edit", records=[record])

    def _api_edits(
        self, view: list[Message], state: PipelineState, *, idle_minutes: float | None, cold: bool
    ) -> StageOutcome:
        config = state.config
        edits = []
        records: list[ServerClearRecord] = []
        saved = 0
        # Clearing thinking needs thinking on for the model being called (else the API answers 400).
        if config.thinking_on and any(
            isinstance(b, ThinkingBlock) for m in view if isinstance(m, AssistantMessage) for b in m.content
        ):
            idle = idle_minutes is not None and idle_minutes >= config.cache_cold_gap_minutes
            keep = {"type": "thinking_turns", "value": 1} if idle else "all"
            edits.append({"type": "clear_thinking_20251015", "keep": keep})
        if config.server_clear and config.main_thread:
            batch = plan_batch(view, state, clearable_results(view, state), cold=cold)
            planned = batch.sizes if batch is not None else {}
            if batch is not None:
                records.append(record_batch(batch, state))
            saved = sum(planned.values())
            edit = clear_edit(view, state, planned)
            if edit is not None:
                edits.append(edit)
        elif not config.autocompact_on:
            edits.append(
                {
                    "type": "clear_tool_uses_20250919",
                    "trigger": {"type": "input_tokens", "value": config.api_clear_trigger_tokens},
                    "keep": {"type": "tool_uses", "value": config.api_clear_keep_tool_uses},
                }
            )
        if not edits:
            return StageOutcome(view)
        outcome = StageOutcome(
            view,
            saved_tokens=saved,
            items=len(records[0].tool_use_ids) if records else 0,
            detail="server-side clear" if saved else "",
            body_extras={"context_management": {"edits": edits}},
        )
        outcome.records.extend(records)
        return outcome

    def decorate(self, drafts: list[WireDraft], view: list[Message], state: PipelineState) -> None:
        """Mark clearable results with `cache_reference` from the first time they are sent (so their
        bytes never change afterwards) and put each pinned `cache_edits` block back where it was first sent."""
        if not state.config.cache_editing:
            return
        clearable = {tid for _, tid in clearable_results(view, state)}
        for draft in drafts:
            if draft.role != "user":
                continue
            draft.content = [
                {**b, "cache_reference": b["tool_use_id"]} if b.get("type") == "tool_result" and b["tool_use_id"] in clearable else b
                for b in draft.content
            ]
        by_source = {uuid: draft for draft in drafts if draft.role == "user" for uuid in draft.sources}
        for edit in state.microcompact.pinned:
            anchor = by_source.get(edit.anchor_uuid)
            # A result a collapse or a compaction took out of the view can no longer be referenced.
            present = [tid for tid in edit.tool_use_ids if tid in clearable]
            if anchor is None or not present:
                continue
            anchor.content.append(
                {"type": "cache_edits", "edits": [{"type": "delete", "cache_reference": tid} for tid in present]}
            )

    def observe(self, usage: Usage, cleared_by_server: int, state: PipelineState) -> list[Message]:
        """What the server's clears and the cache edits' deletes were reported to free; the cached
        deletes' saving, which only the API can count, becomes their boundary entry."""
        mc = state.microcompact
        mc.server_cleared_reported = cleared_by_server
        if usage.cache_deleted_input_tokens <= mc.deleted_tokens_reported:
            return []
        saved = usage.cache_deleted_input_tokens - mc.deleted_tokens_baseline
        mc.deleted_tokens_reported = usage.cache_deleted_input_tokens
        mc.deleted_tokens_baseline = usage.cache_deleted_input_tokens
        newest = mc.pinned[-1].tool_use_ids if mc.pinned else []
        boundary = SystemMessage(
            subtype="microcompact_boundary",
            content="Context microcompacted",
            metadata={
                "trigger": "auto",
                "preTokens": usage.total_input() + saved,
                "tokensSaved": saved,
                "compactedToolIds": newest,
                "clearedAttachmentUUIDs": [],
                "cacheEdited": True,
            },
        )
        return [boundary]
