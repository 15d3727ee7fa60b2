"""Runs the flowchart (agent_repl.context.pipeline) over the history, once per request.

Each stage gets the view the one before it returned and reports what it saved, and its records
are applied to the state (`agent_repl.context.records`) before the next stage runs; then the
view is normalized into the wire, each stage marks the wire as it needs, and the checks
decide what the loop must do first (`Action`). The history is never rewritten here; stages
return new lists and copies. `/context` runs the same code with `dry_run=True`, on a copy of the
state and with no effect outside it, so the numbers shown are the numbers the API will see.

After the reply, `observe_response` feeds the API's own count back into the estimate and lets
each stage react to it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from typing import Any

from agent_repl.context.boundary import is_refused
from agent_repl.context.cache_ttl import cache_marks, cold_after_minutes
from agent_repl.context.estimate import (
    estimate_request,
    freed_since_usage,
    last_usage_index,
    message_cl100k,
    text_cl100k,
    token_count_with_estimation,
)
from agent_repl.context.facts import FactCache
from agent_repl.context.microcompact import clearable_results
from agent_repl.context.normalize import normalize_drafts, resolve_tool_references
from agent_repl.context.records import apply
from agent_repl.context.server_clear import frontier
from agent_repl.context.stage import Check, Stage
from agent_repl.context.state import PipelineState
from agent_repl.context.thinking import leave_out_stale_thinking, recorded_prefixes
from agent_repl.core.api.deferred_tools import boundary_loaded_tools
from agent_repl.core.loop.projection import Action, Projection, StageReport
from agent_repl.core.model.messages import Message, SystemMessage, Usage, UserMessage
from agent_repl.core.model.tokens import encoder_loaded
from agent_repl.transcript.records import RewindRecord, TokenCountsRecord, TokenRatioRecord

MIN_DELTA_FOR_RATIO = 1_000
# The widest span of counts the exact estimate may lie in that the checks are asked about one by one.
MAX_UNCOUNTED_SPAN = 256


class _Uncounted(Exception):
    """A check asked for the count of a text nobody has counted."""


# What a projection's state holds besides its decisions: shared, or the counts themselves.
_NOT_DECIDED = frozenset({"config", "facts", "scratch", "clock"})


def _decided(projection: Projection) -> tuple[object, ...]:
    """What a projection sends and decides, without the ids and times a run makes up."""
    return (
        projection.wire,
        projection.body_extras,
        projection.cache,
        projection.loaded_tools,
        projection.prompt_seed,
        projection.chain_after,
        [r.model_dump(exclude={"timestamp"}) for r in projection.records],
        [m.model_dump(exclude={"uuid", "timestamp"}) for m in projection.new_messages],
    )


def _known_only(facts: FactCache) -> Callable[[str], int]:
    def count(text: str) -> int:
        known = facts.known(text) if text else 0
        if known is None:
            raise _Uncounted
        return known

    return count


class Pipeline:
    """`stages`: the flowchart's steps in order, the view's stages then the checks
    (agent_repl.context.pipeline.flowchart builds the product's list)."""

    def __init__(self, stages: list[Stage | Check] | None = None, state: PipelineState | None = None) -> None:
        self.stages: list[Stage | Check] = list(stages or [])
        self.state = state or PipelineState()
        # Whether a live projection tries upper bounds of the counts before loading the encoder
        # (`_project_with_bounds`): for runs whose estimate nobody reads before the API's own
        # count comes back (print mode); off where a screen shows it.
        self.bounds_first = False
        self._pending_delta: tuple[int, int] | None = None
        # Records `observe_response` applied that the caller has not written yet (`take_records`).
        self._unwritten: list[Any] = []
        # The last view projected for a request, and how long the history was then.
        self._last_view: list[Message] | None = None
        self._projected_length = 0

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
        output_multiplier: float | None = None,
        request_fields: Mapping[str, Any] | None = None,
        token_ratio: float | None = None,
    ) -> None:
        config = self.state.config
        config.request_fields = dict(request_fields or {})
        if token_ratio is not None and token_ratio != config.token_ratio:
            # Another tokenizer: what was learned of the last one says nothing of this one.
            config.token_ratio = self.state.tokens.ratio = token_ratio
        if cache_read_multiplier is not None:
            config.cache_read_multiplier = cache_read_multiplier
        if output_multiplier is not None:
            config.output_multiplier = output_multiplier
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
        projection = (
            self._project_with_bounds(history) if self.bounds_first and not encoder_loaded() else None
        )
        if projection is None:
            projection, effects = self._run(history, self.state)
            for effect in effects:
                effect()
            self.state.tokens.pending_estimate = projection.estimated_tokens
            self._pending_delta = self._delta_since_usage(projection.view, self.state)
        self.state.facts.forget_all_but(projection.view)
        self._last_view, self._projected_length = projection.view, len(history)
        return projection

    def _project_with_bounds(self, history: list[Message]) -> Projection | None:
        """The projection counted with upper bounds (`FactCache.upper_bound`: the exact count of a
        text this process knows, no encoder to load) when they cannot change a decision, else None
        (the caller counts exactly).

        Trusted when, on a copy of the state, no stage decided anything (no record, history entry
        or effect) and no check acted, with the bounded estimate under every check's
        `quiet_below`: each stage acts only once a count reaches a threshold, so with exact counts,
        which are never higher, none would act either. Else, when the texts not known are few and
        short (`_same_at_lower_bounds`), trusted when the same run with them at their lower bounds
        decides the same. Server-side clears pick their batch by the sizes themselves, so they
        always count exactly; so does a request whose new entries could teach the ratio
        (`MIN_DELTA_FOR_RATIO`). Its estimate, an upper bound, is no sample of the estimate's error."""
        if self.state.config.server_clear:
            return None
        exact = self.state.facts
        trial = replace(self.state.copy(), facts=FactCache(count=exact.upper_bound, remember=False))
        projection, effects = self._run(history, trial)
        if effects or projection.action is not None:
            return None
        quiet = min((c.quiet_below(trial) for c in self.stages if isinstance(c, Check)), default=math.inf)
        decided = bool(projection.records or projection.new_messages)
        if (decided or projection.estimated_tokens >= quiet) and not self._same_at_lower_bounds(
            history, projection, trial
        ):
            return None
        delta = self._delta_since_usage(projection.view, trial)
        if delta is not None and delta[1] >= MIN_DELTA_FOR_RATIO:
            return None
        # What the run changed (its records applied, what it derives per projection), as the exact run would have.
        for name in (f.name for f in fields(trial) if f.name not in ("facts", "scratch")):
            setattr(self.state, name, getattr(trial, name))
        self.state.scratch.clear()
        self.state.tokens.pending_estimate = None
        self._pending_delta = None
        projection.estimate_is_upper_bound = True
        return projection

    def _same_at_lower_bounds(
        self, history: list[Message], projection: Projection, trial: PipelineState
    ) -> bool:
        """Whether the exact counts could not decide otherwise than the upper bounds did: the same
        run with the texts this process has not counted at their lower bounds makes the same
        request, records, entries and state, its estimate is at most `MAX_UNCOUNTED_SPAN` under
        the bounded one, and every check stays quiet at each count between the two. The checks
        run there on counts known exactly; one that asks for another text's count decides
        nothing. After a resume whose transcript gave its session's counts, only the new texts
        (the prompt) are not known."""
        exact = self.state.facts
        low_state = replace(self.state.copy(), facts=FactCache(count=exact.lower_bound, remember=False))
        low, effects = self._run(history, low_state)
        lowest, highest = sorted((low.estimated_tokens, projection.estimated_tokens))
        if effects or low.action is not None or highest - lowest > MAX_UNCOUNTED_SPAN:
            return False
        if _decided(low) != _decided(projection):
            return False
        if any(
            getattr(low_state, f.name) != getattr(trial, f.name)
            for f in fields(trial)
            if f.name not in _NOT_DECIDED
        ):
            return False
        checking = replace(trial, facts=FactCache(count=_known_only(exact), remember=False))
        try:
            return all(self._check(tokens, checking) is None for tokens in range(lowest, highest + 1))
        except _Uncounted:
            return False

    def next_request_tokens(self, history: list[Message]) -> int | None:
        """The next request's estimated size without running the stages again: the last view
        projected and the entries appended since that the boundary slice keeps. None before the
        first projection, or when a compaction came after it (the next view starts anew)."""
        if self._last_view is None or len(history) < self._projected_length:
            return None
        later = history[self._projected_length :]
        if any(isinstance(m, SystemMessage) and m.subtype == "compact_boundary" for m in later):
            return None
        shown = {m.uuid for m in self._last_view}
        hidden = self.state.snip.snipped | self.state.compaction.excluded | self.state.rewound
        added = [m for m in later if m.uuid not in shown and m.uuid not in hidden and not is_refused(m)]
        return token_count_with_estimation([*self._last_view, *added], self.state)

    def preview(self, history: list[Message], state: PipelineState | None = None) -> Projection:
        """The same projection on `state`, by default a copy of this pipeline's: nothing here changes."""
        return self._run(history, state if state is not None else self.state.copy())[0]

    def _run(
        self, history: list[Message], state: PipelineState
    ) -> tuple[Projection, list[Callable[[], object]]]:
        state.scratch.clear()
        state.cold_after_minutes = cold_after_minutes(history, state)
        # The cleared set the cached prefix was written with (a stage may add a batch now).
        cached_clears = set(state.microcompact.server_cleared)
        view = history
        reports: list[StageReport] = []
        records: list[Any] = []
        new_messages: list[Message] = []
        body_extras: dict[str, Any] = dict(state.config.request_fields)
        effects: list[Callable[[], object]] = []
        running: int | None = None
        for stage in self._view_stages():
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
            reports.append(
                StageReport("thinking", running or 0, running or 0, thinking.left_out, f"left out {where}")
            )
        for stage in self._view_stages():
            stage.decorate(drafts, view, state)
        wire = [{"role": d.role, "content": d.content} for d in drafts]
        sources = [d.sources for d in drafts]
        # Where the next server-side batch would start: a breakpoint goes just before it.
        next_clear = (
            frontier(view, state, clearable_results(view, state), cached_clears)
            if state.config.server_clear
            else None
        )
        estimated = token_count_with_estimation(view, state)
        projection = Projection(
            view=view,
            wire=wire,
            estimated_tokens=estimated,
            reports=reports,
            records=records,
            new_messages=new_messages,
            body_extras=body_extras,
            wire_sources=sources,
            prompt_seed=seed,
            chain_after=list(thinking.chain_after),
            loaded_tools=loaded,
            cache=cache_marks(history, wire, sources, state, before=next_clear),
            action=self._check(estimated, state),
        )
        return projection, effects

    def _view_stages(self) -> list[Stage]:
        return [stage for stage in self.stages if isinstance(stage, Stage)]

    def check(self, estimated_tokens: int) -> Action | None:
        return self._check(estimated_tokens, self.state)

    def _check(self, estimated_tokens: int, state: PipelineState) -> Action | None:
        """The first action a check asks for, in the flowchart's order; None to send as is."""
        for stage in self.stages:
            if isinstance(stage, Check) and (action := stage.check(estimated_tokens, state)) is not None:
                return action
        return None

    def set_aside(self, history: list[Message], prompt_uuid: str) -> list[Any]:
        """A prompt the API still refuses as too long after recovery leaves the view, with what its
        turn appended after it (a rewind to just before it; the transcript keeps them), so the next
        prompt is not refused for it. A compaction's boundary and summary stay. The records applied."""
        start = next((i for i, m in enumerate(history) if m.uuid == prompt_uuid), None)
        if start is None:
            return []
        later = history[start:]
        keep = {
            kept
            for m in later
            if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"
            for kept in (m.uuid, str(m.metadata.get("summaryUuid") or ""))
        }
        excluded = [m.uuid for m in later if m.uuid not in keep]
        record = RewindRecord(prompt_uuid=prompt_uuid, restore="conversation", excluded_uuids=excluded)
        apply(self.state, record)
        if self._last_view is not None:  # the next request's estimate no longer counts them
            self._last_view = [m for m in self._last_view if m.uuid not in self.state.rewound]
        return [record]

    def recover_from_overflow(self, history: list[Message]) -> list[Any]:
        view = self.project(history, dry_run=True).view
        return [record for stage in self._view_stages() for record in stage.recover(view, self.state)]

    def take_records(self) -> list[Any]:
        """The records the last `observe_response` applied, for the caller to write (once)."""
        records, self._unwritten = self._unwritten, []
        return records

    def take_counts(self, history: list[Message] | None = None) -> list[Any]:
        """The exact counts of the texts counted since the last call, as a record for the caller
        to write (once): a resume then knows them without loading the encoder. `history`: the
        session's, whose entries since the last projection (the turn's last reply, which the next
        request's estimate takes from its usage) are counted first when the encoder is loaded
        already, as it is in a live session that counts exactly, so a resume knows every text of
        its view; print mode, which may not have loaded it, leaves them to the resume."""
        if history is not None and self._last_view is not None and encoder_loaded():
            for message in history[self._projected_length :]:
                self.state.facts.get(message)
        counted = self.state.facts.take_counted()
        # A sub-agent's transcript is never resumed: its counts would only add lines to it.
        return [TokenCountsRecord.of(counted)] if counted and self.state.config.main_thread else []

    def _delta_since_usage(self, view: list[Message], state: PipelineState) -> tuple[int, int] | None:
        """(tokens the last usage already counted, cl100k tokens of what came after it), cache-deleted
        results left out; None before the first usage."""
        index = last_usage_index(view, state)
        usage = state.tokens.last_usage
        if index is None or usage is None:
            return None
        deleted = state.microcompact.deleted
        total = 0
        for message in view[index + 1 :]:
            total += message_cl100k(message, state)[0]
            if deleted and isinstance(message, UserMessage):
                for block in message.tool_results():
                    if block.tool_use_id in deleted:
                        total -= text_cl100k(block.text(), state)
        return usage.context_tokens() - freed_since_usage(state), total

    def observe_response(
        self, usage: Usage, *, anchor_uuid: str, context_management: dict[str, Any] | None = None
    ) -> list[Message]:
        """Feed the API's own count back (the usage anchor, the learned ratio, the estimate error),
        then let each stage react to it (the cached-microcompact boundary only the API can report)."""
        tokens, mc = self.state.tokens, self.state.microcompact
        actual = usage.total_input()
        cleared_by_server = sum(
            int(edit.get("cleared_input_tokens") or 0)
            for edit in (context_management or {}).get("applied_edits") or []
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
                ratio = min(max(learned, 0.8), 1.6)
                if ratio != tokens.ratio:
                    # A record: the estimates that decide what a projection collapses read the ratio,
                    # and a resume cannot learn it again from the history.
                    record = TokenRatioRecord(ratio=ratio, tokenizer_ratio=self.state.config.token_ratio)
                    apply(self.state, record)
                    self._unwritten.append(record)
        self._pending_delta = None
        tokens.last_usage = usage
        tokens.last_usage_anchor = anchor_uuid
        # The usage counts the request just sent, up to its reply: it describes that view.
        tokens.anchor_describes_view = True
        tokens.pending_estimate = None
        tokens.responses += 1
        # What the stages freed since the last usage: the new usage counts it.
        self.state.snip.tokens_freed_since_usage = 0
        mc.freed_since_usage = mc.server_freed_since_usage = 0
        return [
            m for stage in self._view_stages() for m in stage.observe(usage, cleared_by_server, self.state)
        ]
