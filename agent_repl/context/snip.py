"""Snip (docs/architecture.md 5.3): whole entries leave the model's view; the history keeps them. Zero model calls.

Three sources share one planner. The model's `Snip` tool and the user's `/snip` name entries by
the `[id:xxxxxx]` tags normalization puts on user messages (or by uuid), a single id or an
inclusive range; `SnipStage` picks snip-safe spans by itself when the context is over a
threshold. A tool_use never leaves without its tool_result, nor the other way round. Every snip
is a `SnipRecord` in the transcript, `BoundarySlice` filters the snipped uuids out of every later
view, and the freed tokens are subtracted from the last API usage, which predates the snip.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal, Protocol

from agent_repl.context.estimate import (
    estimate_message,
    estimate_messages,
    last_usage_index,
    token_count_with_estimation,
)
from agent_repl.context.ids import ID_LENGTH, short_id
from agent_repl.context.projector import Pipeline
from agent_repl.context.records import apply
from agent_repl.context.rounds import index_of
from agent_repl.context.stage import Stage, StageOutcome
from agent_repl.context.state import PipelineState
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    UserMessage,
)
from agent_repl.core.tooling.tool import ToolPorts
from agent_repl.transcript.records import SnipRecord

SnipSource = Literal["model", "user", "auto"]
# The key of the Snip tool's callback in the session's shared tool state.
# Inputs at least this alike (difflib ratio of their values) count as another try of the same call.
SIMILAR_INPUT_RATIO = 0.6


@dataclass(frozen=True)
class SnipError:
    """Why nothing was snipped: one text for the model, one line for the user."""

    model_message: str
    user_message: str


@dataclass(frozen=True)
class SnipPlan:
    uuids: tuple[str, ...]  # in view order
    tokens_freed: int
    # The part of `tokens_freed` the last API usage counted (entries up to its reply).
    tokens_in_last_usage: int
    tool_calls: int


def is_tagged(message: Message) -> bool:
    """Whether normalization gives this entry an `[id:]` tag (every non-meta user entry)."""
    return isinstance(message, UserMessage) and not message.is_meta


def _clean_ref(ref: str) -> str:
    ref = ref.strip()
    lowered = ref.lower()
    if lowered.startswith("[id:") and ref.endswith("]"):
        ref = ref[4:-1]
    elif lowered.startswith("id:"):
        ref = ref[3:]
    return ref.strip()


def resolve_ref(view: list[Message], ref: str) -> int | None:
    """The view index of a six-character `[id:]` id (or a uuid), or None."""
    key = _clean_ref(ref)
    for index, message in enumerate(view):
        if message.uuid == key:
            return index
    if len(key) == ID_LENGTH:
        key = key.lower()
        for index, message in enumerate(view):
            if is_tagged(message) and short_id(message.uuid) == key:
                return index
    return None


def _make_plan(view: list[Message], state: PipelineState, indexes: Iterable[int]) -> SnipPlan:
    ordered = sorted(indexes)
    anchor = last_usage_index(view, state)
    freed = in_usage = 0
    for index in ordered:
        tokens = estimate_message(view[index], state)
        freed += tokens
        if anchor is not None and index <= anchor:
            in_usage += tokens
    calls = index_of(view, state).tool_calls_in(ordered)
    return SnipPlan(tuple(view[i].uuid for i in ordered), freed, in_usage, calls)


def _unknown_id(ref: str, state: PipelineState) -> SnipError:
    key = _clean_ref(ref)
    if any(uuid == key or short_id(uuid) == key.lower() for uuid in state.snip.snipped):
        return SnipError(
            f"The message [id:{key}] was already snipped; it is no longer in your context.",
            f"{key} is already snipped",
        )
    return SnipError(
        f"No message with id {key!r} in the current context. Use an id exactly as it appears in an [id:...] tag.",
        f"no message {key!r} in the current view",
    )


def plan_snip(
    view: list[Message],
    state: PipelineState,
    start_id: str,
    end_id: str | None = None,
    *,
    between_turns: bool = False,
) -> SnipPlan | SnipError:
    """Decide what a snip of `start_id` (through `end_id`, inclusive, in view order) removes.
    `between_turns`: no turn is running (a user's /snip), so the latest turn may go too."""
    start = resolve_ref(view, start_id)
    if start is None:
        return _unknown_id(start_id, state)
    end = start
    if end_id is not None and end_id.strip():
        found = resolve_ref(view, end_id)
        if found is None:
            return _unknown_id(end_id, state)
        end = found
    if end < start:
        return SnipError(
            f"The range is reversed: {_clean_ref(end_id or '')} comes before {_clean_ref(start_id)} in the conversation. "
            "Pass the earlier message as start_id.",
            "the end of the range comes before its start",
        )
    rounds = index_of(view, state)
    turn = len(view) if between_turns else rounds.latest_prompt_index()
    current_turn = SnipError(
        "That would remove part of the current turn (the user's latest request and what followed it), "
        "which is still in use. Only earlier messages can be snipped.",
        "cannot snip the current turn",
    )
    if end >= turn:
        return current_turn
    chosen = rounds.pair_closure(i for i in range(start, end + 1) if not isinstance(view[i], SystemMessage))
    if not chosen:
        return SnipError(
            "Those ids name nothing that is sent to you; nothing was snipped.", "nothing to snip there"
        )
    if max(chosen) >= turn:
        return current_turn
    first_left = next(
        (m for i, m in enumerate(view) if i not in chosen and not isinstance(m, SystemMessage)), None
    )
    if isinstance(first_left, AssistantMessage) and not first_left.is_api_summary:
        # The API wants the conversation to open with a user message (or its own summary).
        return SnipError(
            "That would leave the conversation opening with one of your replies. Include the replies that "
            "follow in the range, or snip a later span.",
            "the view would start with an assistant reply",
        )
    return _make_plan(view, state, chosen)


def record_snip(state: PipelineState, plan: SnipPlan, source: SnipSource, reason: str | None = None) -> SnipRecord:
    """The record of the plan; what it frees from the last usage's count is counted until the next usage."""
    state.snip.tokens_freed_since_usage += plan.tokens_in_last_usage
    return SnipRecord(uuids=list(plan.uuids), source=source, tokens_freed=plan.tokens_freed, reason=reason)


def apply_snip(
    state: PipelineState, plan: SnipPlan, source: SnipSource, reason: str | None = None
) -> SnipRecord:
    """Make the plan part of the pipeline state and return the record to write."""
    record = record_snip(state, plan, source, reason)
    apply(state, record)
    return record


def _input_text(tool_input: dict[str, Any]) -> str:
    values = (
        v if isinstance(v, str) else json.dumps(v, sort_keys=True) for _, v in sorted(tool_input.items())
    )
    return " ".join(values)[:2_000]


def similar_inputs(first: dict[str, Any], second: dict[str, Any]) -> bool:
    if first == second:
        return True
    return SequenceMatcher(None, _input_text(first), _input_text(second)).ratio() >= SIMILAR_INPUT_RATIO


def snip_safe_spans(view: list[Message], state: PipelineState, keep_recent: int) -> list[set[int]]:
    """Spans the automatic snip may take, oldest first, each a tool call with its result:

    (a) digested results of clearable tools: not among the `keep_recent` newest results;
    (b) failed calls a later call of the same tool with similar input did instead.
    Never the current turn, never a result microcompact already cleared or deleted from the cache,
    never the entry a pinned cache edit rides on.
    """
    rounds = index_of(view, state)
    turn = rounds.latest_prompt_index()
    mc, clearable = state.microcompact, state.config.clearable_tools
    results = rounds.result_blocks()
    recent = {result.tool_use_id for _, result in results[-keep_recent:]} if keep_recent > 0 else set()
    uses = {result.tool_use_id: rounds.use_block(result.tool_use_id) for _, result in results}
    succeeded: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for index, result in results:
        use = uses[result.tool_use_id]
        if use is not None and not result.is_error:
            succeeded.setdefault(use.name, []).append((index, use.input))
    candidates: set[str] = set()
    for index, result in results:
        tool_use_id = result.tool_use_id
        use = uses[tool_use_id]
        if use is None or index >= turn or tool_use_id in mc.cleared or tool_use_id in mc.deleted:
            continue
        if use.name in clearable and tool_use_id not in recent:
            candidates.add(tool_use_id)
        elif result.is_error and any(
            later > index and similar_inputs(use.input, tool_input)
            for later, tool_input in succeeded.get(use.name, [])
        ):
            candidates.add(tool_use_id)
    # An entry a cache edit is pinned to must stay, or the edit would stop being sent; an entry a
    # collapse already covers is not in the request at all.
    anchors = {edit.anchor_uuid for edit in mc.pinned} | set(state.collapse.owner)
    spans: list[set[int]] = []
    for tool_use_id in candidates:
        span = rounds.pair_closure(rounds.uses_at[tool_use_id])
        if (
            max(span) < turn
            and rounds.answered_in(span) <= candidates
            and not any(view[i].uuid in anchors for i in span)
        ):
            spans.append(span)
    return sorted(spans, key=min)


class SnipStage(Stage):
    """Automatic snip: over `auto_snip_threshold` of the effective window, snip-safe spans go,
    oldest first, until the count is under 90% of that threshold. Below it, one cheap count.
    While autocompact is on it stands aside: the compaction is the one rewrite of the prefix."""

    name = "snip"

    def __init__(self, keep_recent: int = 10) -> None:
        self.keep_recent = keep_recent

    def apply(self, view: list[Message], state: PipelineState) -> StageOutcome:
        if state.config.autocompact_on:
            return StageOutcome(view)
        threshold = state.config.auto_snip_threshold * state.config.effective_window
        tokens = token_count_with_estimation(view, state)
        if threshold <= 0 or tokens <= threshold:
            return StageOutcome(view)
        target = 0.9 * threshold
        chosen: set[int] = set()
        freed = spans_taken = 0
        for span in snip_safe_spans(view, state, self.keep_recent):
            if tokens - freed < target:
                break
            new = span - chosen
            if not new:
                continue
            chosen |= new
            spans_taken += 1
            freed += estimate_messages([view[i] for i in sorted(new)], state)
        if not chosen:
            return StageOutcome(view, detail="over the threshold, nothing snip-safe")
        plan = _make_plan(view, state, chosen)
        gone = set(plan.uuids)
        reason = f"auto: over {state.config.auto_snip_threshold:.0%} of the effective window"
        return StageOutcome(
            [m for m in view if m.uuid not in gone],
            saved_tokens=plan.tokens_freed,
            items=spans_taken,
            detail=f"{spans_taken} snip-safe tool calls, {len(gone)} entries",
            records=[record_snip(state, plan, "auto", reason)],
        )


@dataclass(frozen=True)
class SnipResult:
    """What a `/snip` or a Snip tool call did: the record written, or why nothing was."""

    plan: SnipPlan | None = None
    record: SnipRecord | None = None
    error: SnipError | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None

    @property
    def model_text(self) -> str:
        if self.error is not None:
            return self.error.model_message
        assert self.plan is not None
        plan = self.plan
        calls = f", including {plan.tool_calls} tool calls with their results" if plan.tool_calls else ""
        return (
            f"Snipped {len(plan.uuids)} messages{calls} (about {plan.tokens_freed:,} tokens). "
            "From your next request on they are no longer in your context; the user still sees them."
        )

    @property
    def user_text(self) -> str:
        if self.error is not None:
            return f"Nothing snipped: {self.error.user_message}"
        assert self.plan is not None
        return f"Snipped {len(self.plan.uuids)} messages, ~{self.plan.tokens_freed:,} tokens"

    @property
    def structured(self) -> dict[str, Any]:
        plan = self.plan
        return (
            {"snipped": len(plan.uuids), "uuids": list(plan.uuids), "tokensFreed": plan.tokens_freed}
            if plan
            else {}
        )


class SnipSession(Protocol):
    """What snipping needs from a session."""

    messages: list[Message]
    tool_ports: ToolPorts

    async def append_record(self, record: Any) -> None: ...


async def snip_messages(
    session: SnipSession,
    pipeline: Pipeline,
    start_id: str,
    end_id: str | None = None,
    *,
    source: SnipSource = "user",
    reason: str | None = None,
) -> SnipResult:
    """Snip by `[id:]` against the view the next request would send; the record is written at once."""
    view = pipeline.project(session.messages, dry_run=True).view
    # The model snips mid-turn; the user snips between turns, when the latest turn is finished.
    plan = plan_snip(view, pipeline.state, start_id, end_id, between_turns=source == "user")
    if isinstance(plan, SnipError):
        return SnipResult(error=plan)
    record = apply_snip(pipeline.state, plan, source, reason)
    await session.append_record(record)
    return SnipResult(plan=plan, record=record)


@dataclass(frozen=True)
class SnippableMessage:
    """One entry a `/snip` picker can offer: its `[id:]` (tagged entries only, else ""), uuid, size."""

    id: str
    uuid: str
    role: str
    tokens: int
    first_line: str


def _first_line(message: Message, tool_names: dict[str, str]) -> str:
    text = message.content if isinstance(message, SystemMessage) else message.text()
    if isinstance(message, UserMessage) and message.is_tool_result():
        result = message.tool_results()[0]
        kind = "error" if result.is_error else "result"
        text = f"{tool_names.get(result.tool_use_id, 'tool')} {kind}: {result.text()}"
    elif isinstance(message, AssistantMessage) and not text:
        uses = message.tool_uses()
        text = f"{uses[0].name} {json.dumps(uses[0].input, ensure_ascii=False)}" if uses else "(thinking)"
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= 100 else line[:99] + "…"


def snippable_messages(session: SnipSession, pipeline: Pipeline) -> list[SnippableMessage]:
    """The entries of the next request's view the user may snip between turns."""
    view = pipeline.project(session.messages, dry_run=True).view
    names = {use.id: use.name for m in view if isinstance(m, AssistantMessage) for use in m.tool_uses()}
    return [
        SnippableMessage(
            id=short_id(message.uuid) if is_tagged(message) else "",
            uuid=message.uuid,
            role=message.type,
            tokens=estimate_message(message, pipeline.state),
            first_line=_first_line(message, names),
        )
        for message in view
        if not isinstance(message, SystemMessage)
    ]


def install_snip(session: SnipSession, pipeline: Pipeline) -> None:
    """Give the Snip tool its way in: the session's snip port."""

    async def snip(start_id: str, end_id: str | None = None, reason: str | None = None) -> SnipResult:
        return await snip_messages(session, pipeline, start_id, end_id, source="model", reason=reason)

    session.tool_ports.snip = snip
