"""The context pipeline: small stages, cheapest first, then API normalization (SPEC section 3).

    boundary slice (+ snipped filtered) -> tool-result budget -> snip -> microcompact -> wire

A stage that is not needed returns the view unchanged, so the destructive stages late in the
list rarely run. The history is never rewritten here; stages return new lists and copies, and
records, which change the state (`agent_repl.context.records`). `/context` runs the same code
with `dry_run=True`, on a copy of the state and with no effect outside it, so the numbers shown
are the numbers the API will see (R1.3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_repl.context.cache_ttl import cache_marks, cold_after_minutes
from agent_repl.context.estimate import (
    estimate_request,
    freed_since_usage,
    last_usage_index,
    message_cl100k,
    text_cl100k,
    token_count_with_estimation,
)
from agent_repl.context.microcompact import clearable_results
from agent_repl.context.normalize import WireDraft, normalize_drafts, resolve_tool_references
from agent_repl.context.records import apply
from agent_repl.context.server_clear import frontier
from agent_repl.context.stage import Stage, StageOutcome
from agent_repl.context.state import PipelineState
from agent_repl.context.thinking import leave_out_stale_thinking, recorded_prefixes
from agent_repl.core.deferred_tools import boundary_loaded_tools
from agent_repl.core.messages import AssistantMessage, Message, SystemMessage, Usage, UserMessage
from agent_repl.core.projection import Projection, StageReport

CACHE_EDITING_BETA = "cache-editing-agent-repl"
MIN_DELTA_FOR_RATIO = 1_000


def _is_active_boundary(message: Message, undone: frozenset[str] | set[str]) -> bool:
    return isinstance(message, SystemMessage) and message.subtype == "compact_boundary" and message.uuid not in undone


def _previous_boundary(history: list[Message], before: int, undone: frozenset[str] | set[str]) -> int | None:
    for index in range(before - 1, -1, -1):
        if _is_active_boundary(history[index], undone):
            return index
    return None


def _view_at(history: list[Message], index: int, end: int, undone: frozenset[str] | set[str]) -> list[Message]:
    """The view of `history[:end]` whose last active boundary is at `index`."""
    boundary = history[index]
    after = history[index:end]
    kept_from = boundary.metadata.get("keptFromUuid") if isinstance(boundary, SystemMessage) else None
    if not kept_from:
        return after
    previous = _previous_boundary(history, index, undone)
    floor = previous + 1 if previous is not None else 0
    start = next((i for i in range(index - 1, floor - 1, -1) if history[i].uuid == kept_from), None)
    if start is not None:
        kept = [m for m in history[start:index] if not isinstance(m, SystemMessage)]
    elif previous is not None:
        # The kept tail reaches into an earlier compaction's view: take it from that view.
        earlier = _view_at(history, previous, index, undone)
        position = next((i for i, m in enumerate(earlier) if m.uuid == kept_from), len(earlier))
        kept = [m for m in earlier[position:] if not isinstance(m, SystemMessage)]
    else:
        kept = []
    summary_uuid = boundary.metadata.get("summaryUuid") if isinstance(boundary, SystemMessage) else None
    summary_at = next(
        (i for i, m in enumerate(after) if m.uuid == summary_uuid or getattr(m, "is_compact_summary", False)), 0
    )
    return [*after[: summary_at + 1], *kept, *after[summary_at + 1 :]]


def slice_after_compact_boundary(history: list[Message], undone: frozenset[str] | set[str] = frozenset()) -> list[Message]:
    """The last compact boundary and everything after it (SPEC R3.0.1), with the kept tail the
    boundary names (entries of the view before it) placed right after its summary."""
    index = _previous_boundary(history, len(history), undone)
    if index is None:
        return list(history)
    return _view_at(history, index, len(history), undone)


def is_refused(message: Message) -> bool:
    """A reply the model refused: shown in the history, never sent back."""
    return isinstance(message, AssistantMessage) and message.stop_reason == "refusal"


class BoundarySlice:
    """R3.0: the last compact boundary onward, then snipped entries, undone compactions, rewound
    entries and refused replies filtered out."""

    name = "boundary"

    def apply(self, view: list[Message], state: PipelineState) -> StageOutcome:
        compaction = state.compaction
        sliced = slice_after_compact_boundary(view, compaction.undone)
        hidden = state.snip.snipped
        if compaction.excluded or state.rewound:
            hidden = hidden | compaction.excluded | state.rewound
        kept = [m for m in sliced if m.uuid not in hidden and not is_refused(m)]
        return StageOutcome(kept, items=len(view) - len(kept), detail=f"{len(view) - len(kept)} entries before or snipped")


def decorate_for_cache_editing(drafts: list[WireDraft], view: list[Message], state: PipelineState) -> None:
    """Mark clearable results with `cache_reference` from the first time they are sent (so their
    bytes never change afterwards) and put each pinned `cache_edits` block back where it was first sent."""
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
        draft = by_source.get(edit.anchor_uuid)
        # A result a collapse or a compaction took out of the view can no longer be referenced.
        present = [tid for tid in edit.tool_use_ids if tid in clearable]
        if draft is None or not present:
            continue
        draft.content.append(
            {"type": "cache_edits", "edits": [{"type": "delete", "cache_reference": tid} for tid in present]}
        )


class Pipeline:
    def __init__(self, stages: list[Stage] | None = None, state: PipelineState | None = None) -> None:
        self.stages: list[Stage] = [BoundarySlice(), *(stages or [])]
        self.state = state or PipelineState()
        self._pending_delta: tuple[int, int] | None = None

    def configure_endpoint(self, *, cache_editing: bool) -> None:
        self.state.config.cache_editing = cache_editing

    def set_window(self, context_window: int) -> None:
        self.state.config.set_window(context_window)

    def configure_model(
        self,
        *,
        prompt_seed: str,
        thinking_on: bool,
        on_demand_compaction: bool,
        prompt_seed_for: Callable[[frozenset[str]], str] | None = None,
        cache_read_multiplier: float | None = None,
    ) -> None:
        config = self.state.config
        if cache_read_multiplier is not None:
            config.cache_read_multiplier = cache_read_multiplier
        config.prompt_seed, config.thinking_on, config.on_demand_compaction = (
            prompt_seed,
            thinking_on,
            on_demand_compaction,
        )
        config.prompt_seed_for = prompt_seed_for

    def project(self, history: list[Message], *, dry_run: bool = False) -> Projection:
        """The request the next call sends: its records are applied to the state (the caller writes
        them) and its effects run. A dry run is `preview`."""
        if dry_run:
            return self.preview(history)
        projection, effects = self._run(history, self.state)
        for effect in effects:
            effect()
        self.state.tokens.pending_estimate = projection.estimated_tokens
        self._pending_delta = self._delta_since_usage(projection.view)
        self.state.facts.forget_all_but(projection.view)
        return projection

    def preview(self, history: list[Message], state: PipelineState | None = None) -> Projection:
        """The same projection on `state`, by default a copy of this pipeline's: nothing here changes."""
        return self._run(history, state if state is not None else self.state.copy())[0]

    def _run(self, history: list[Message], state: PipelineState) -> tuple[Projection, list[Callable[[], object]]]:
        state.scratch.clear()
        state.cold_after_minutes = cold_after_minutes(history, state)
        # The cleared set the cached prefix was written with (a stage may add a batch now).
        cached_clears = set(state.microcompact.server_cleared)
        view = history
        reports: list[StageReport] = []
        records: list[Any] = []
        new_messages: list[Message] = []
        body_extras: dict[str, Any] = {}
        betas: list[str] = []
        effects: list[Callable[[], object]] = []
        running: int | None = None
        for stage in self.stages:
            outcome = stage.apply(view, state)
            for record in outcome.records:
                apply(state, record)
            view = outcome.view
            if running is None:
                running = estimate_request(view, state)
                reports.append(StageReport(stage.name, running, running, outcome.items, outcome.detail))
            else:
                before, running = running, running - outcome.saved_tokens
                reports.append(StageReport(stage.name, before, running, outcome.items, outcome.detail))
            records.extend(outcome.records)
            new_messages.extend(outcome.new_messages)
            body_extras.update(outcome.body_extras)
            betas.extend(b for b in outcome.betas if b not in betas)
            effects.extend(outcome.effects)
        drafts = normalize_drafts(view, blocks_for=lambda m: state.facts.get(m).wire_blocks)
        loaded = boundary_loaded_tools(view) & state.config.deferred_tools
        resolve_tool_references(drafts, state.config.deferred_tools - loaded)
        seed = state.config.prompt_seed
        if loaded and state.config.prompt_seed_for is not None:
            seed = state.config.prompt_seed_for(loaded)
        recorded = recorded_prefixes(view)
        thinking = leave_out_stale_thinking(drafts, seed, recorded, state.facts.block_digests)
        drafts = thinking.drafts
        anchor = state.tokens.last_usage_anchor
        state.tokens.anchor_describes_view = anchor is not None and thinking.describes(
            next((m for m in reversed(view) if m.uuid == anchor), None)
        )
        if thinking.left_out:
            where = f"from wire message {thinking.first_changed}"
            reports.append(StageReport("thinking", running or 0, running or 0, thinking.left_out, f"left out {where}"))
        if state.config.cache_editing:
            decorate_for_cache_editing(drafts, view, state)
            betas.append(CACHE_EDITING_BETA)
        wire = [{"role": d.role, "content": d.content} for d in drafts]
        sources = [d.sources for d in drafts]
        # Where the next server-side batch would start: a breakpoint goes just before it.
        next_clear = frontier(view, state, clearable_results(view, state), cached_clears) if state.config.server_clear else None
        projection = Projection(
            view=view,
            wire=wire,
            estimated_tokens=token_count_with_estimation(view, state),
            reports=reports,
            records=records,
            new_messages=new_messages,
            body_extras=body_extras,
            betas=betas,
            wire_sources=sources,
            prompt_seed=seed,
            chain_after=list(thinking.chain_after),
            loaded_tools=loaded,
            cache=cache_marks(history, wire, sources, state, before=next_clear),
        )
        return projection, effects

    def _delta_since_usage(self, view: list[Message]) -> tuple[int, int] | None:
        """(tokens the last usage already counted, cl100k tokens of what came after it), cache-deleted
        results left out; None before the first usage."""
        index = last_usage_index(view, self.state)
        usage = self.state.tokens.last_usage
        if index is None or usage is None:
            return None
        deleted = self.state.microcompact.deleted
        total = 0
        for message in view[index + 1 :]:
            total += message_cl100k(message, self.state)[0]
            if deleted and isinstance(message, UserMessage):
                for block in message.tool_results():
                    if block.tool_use_id in deleted:
                        total -= text_cl100k(block.text(), self.state)
        return usage.context_tokens() - freed_since_usage(self.state), total

    def observe_response(
        self, usage: Usage, *, anchor_uuid: str, context_management: dict[str, Any] | None = None
    ) -> list[Message]:
        """Feed the API's own count back: the usage anchor, the learned ratio, the estimate error,
        and the cached-microcompact boundary whose saving only the API can report."""
        tokens, mc = self.state.tokens, self.state.microcompact
        actual = usage.total_input()
        cleared_by_server = sum(
            int(edit.get("cleared_input_tokens") or 0) for edit in (context_management or {}).get("applied_edits") or []
        )
        if tokens.pending_estimate is not None and actual > 0:
            tokens.errors.append((tokens.pending_estimate - actual) / actual)
        if self._pending_delta is not None and actual > 0:
            base, delta_cl100k = self._pending_delta
            # Learn only from a delta large enough to say something about the text's tokenizer ratio.
            if delta_cl100k >= MIN_DELTA_FOR_RATIO:
                # Server-side clears are re-applied on every request: only what they newly cleared
                # counts (the base already subtracts a new batch's estimate; the report replaces it).
                new_clears = cleared_by_server - mc.server_cleared_reported
                learned = (actual + new_clears - base - mc.server_freed_since_usage) / delta_cl100k
                tokens.ratio = min(max(learned, 0.8), 1.6)
        self._pending_delta = None
        tokens.last_usage = usage
        tokens.last_usage_anchor = anchor_uuid
        tokens.pending_estimate = None
        tokens.responses += 1
        self.state.snip.tokens_freed_since_usage = 0
        mc.freed_since_usage = mc.server_freed_since_usage = 0
        mc.server_cleared_reported = cleared_by_server
        new_messages: list[Message] = []
        if usage.cache_deleted_input_tokens > mc.deleted_tokens_reported:
            saved = usage.cache_deleted_input_tokens - mc.deleted_tokens_baseline
            mc.deleted_tokens_reported = usage.cache_deleted_input_tokens
            mc.deleted_tokens_baseline = usage.cache_deleted_input_tokens
            newest = mc.pinned[-1].tool_use_ids if mc.pinned else []
            new_messages.append(
                SystemMessage(
                    subtype="microcompact_boundary",
                    content="Context microcompacted",
                    metadata={
                        "trigger": "auto",
                        "preTokens": actual + saved,
                        "tokensSaved": saved,
                        "compactedToolIds": newest,
                        "clearedAttachmentUUIDs": [],
                        "cacheEdited": True,
                    },
                )
            )
        return new_messages
