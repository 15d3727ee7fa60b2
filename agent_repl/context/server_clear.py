"""Clearing old tool results on the public API: `clear_tool_uses_20250919`, in batches.

The client keeps sending every result as it was; the server puts its placeholder in place of the
oldest before the model sees the prompt. So the prefix the client sent never changes and the
thinking blocks after a cleared result stay valid (a client-side clear would invalidate them).
`keep` is set on each request to the number of tool uses after the last cleared one, so the
cleared set moves only when a new batch is decided: the cached prefix breaks then, from the
batch's first result, and nowhere else. Every request also puts a breakpoint just before the
next batch's first result (`frontier`), so the break rewrites only what comes after it.

A batch takes every clearable result older than the newest `server_clear_protect_tokens` of them
(never fewer than the newest three). It is decided when what it frees pays for the break:

    freed x read price x expected remaining requests  >=  (write price - read price) x tokens after it

with the requests made so far as the expected remaining ones (a session that has run n requests
tends to run about as many more), or at once when the cache is cold (the gap since the last reply
passed the lifetime of what it wrote), since the prefix is written again anyway. `clear_at_least`
asks the server for at least half of what the batch itself should free: an estimate far off
means the server clears nothing rather than a set the client did not plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_repl.context.budget import tool_names
from agent_repl.context.estimate import estimate_messages, text_cl100k
from agent_repl.context.state import PipelineState
from agent_repl.context.thresholds import scaled_amount
from agent_repl.core.model.messages import AssistantMessage, Message, UserMessage
from agent_repl.transcript.records import ServerClearRecord

CLEAR_TOOL_USES = "clear_tool_uses_20250919"
MIN_KEPT = 3
WRITE_5M, WRITE_1H = 1.25, 2.0


@dataclass(frozen=True)
class Batch:
    sizes: dict[str, int]  # tool_use_id -> estimated tokens, oldest first
    trigger: str  # "cold" or "pays"

    @property
    def tokens(self) -> int:
        return sum(self.sizes.values())


# (entry index, tool_use_id) of every result microcompact may clear, oldest first.
Clearable = list[tuple[int, str]]


def _sizes(view: list[Message], state: PipelineState, clearable: Clearable) -> list[tuple[int, str, int]]:
    """(entry index, tool_use_id, tokens) of every clearable result in the view, oldest first."""
    found = []
    for index, tool_use_id in clearable:
        message = view[index]
        assert isinstance(message, UserMessage)
        text = next((b.text() for b in message.tool_results() if b.tool_use_id == tool_use_id), "")
        found.append((index, tool_use_id, round(text_cl100k(text, state) * state.tokens.ratio)))
    return found


def plan_batch(view: list[Message], state: PipelineState, clearable: Clearable, *, cold: bool) -> Batch | None:
    """The next batch to clear, or None when none pays for itself yet."""
    config, cleared = state.config, state.microcompact.server_cleared
    results = _sizes(view, state, clearable)
    protect = scaled_amount(config.server_clear_protect_tokens, config.effective_window)
    kept, older = 0, len(results)
    for position in range(len(results) - 1, -1, -1):
        if kept >= protect and len(results) - position > MIN_KEPT:
            break
        kept += results[position][2]
        older = position
    batch = [(index, tid, tokens) for index, tid, tokens in results[:older] if tid not in cleared]
    freed = sum(tokens for _, _, tokens in batch)
    if not batch or freed < config.server_clear_min_tokens:
        return None
    sizes = {tid: tokens for _, tid, tokens in batch}
    if cold:
        return Batch(sizes, "cold")
    first = batch[0][0]
    after = estimate_messages(view[first:], state) - freed
    after -= sum(cleared[tid] for _, tid, _ in results[older:] if tid in cleared)
    write = WRITE_1H if state.cold_after_minutes > 5 else WRITE_5M
    read = config.cache_read_multiplier
    if freed * read * max(1, state.tokens.responses) < (write - read) * max(0, after):
        return None
    return Batch(sizes, "pays")


def clear_edit(view: list[Message], state: PipelineState, planned: dict[str, int] | None = None) -> dict[str, Any] | None:
    """The `clear_tool_uses_20250919` edit that clears exactly the recorded set and `planned`, a
    batch decided now (its record is applied after the stage), or None."""
    cleared = {**state.microcompact.server_cleared, **(planned or {})}
    if not cleared:
        return None
    names = tool_names(view, state)
    uses = [b.id for m in view if isinstance(m, AssistantMessage) for b in m.tool_uses()]
    last = max((i for i, tid in enumerate(uses) if tid in cleared), default=None)
    if last is None:
        return None
    keep = len(uses) - last - 1
    clearable = state.config.clearable_tools
    excluded = sorted({names[tid] for tid in uses[: last + 1] if tid in names and names[tid] not in clearable})
    cleared_tokens = sum(cleared[tid] for tid in uses[: last + 1] if tid in cleared)
    edit: dict[str, Any] = {
        "type": CLEAR_TOOL_USES,
        "trigger": {"type": "tool_uses", "value": keep},
        "keep": {"type": "tool_uses", "value": keep},
        "clear_at_least": {"type": "input_tokens", "value": cleared_tokens // 2},
    }
    if excluded:
        edit["exclude_tools"] = excluded
    return edit


def record_batch(batch: Batch, state: PipelineState) -> ServerClearRecord:
    """The record that makes the batch part of every later request (and of the transcript, so a
    resume sends the same); what it frees is counted until the next usage."""
    mc = state.microcompact
    mc.freed_since_usage += batch.tokens
    mc.server_freed_since_usage += batch.tokens
    return ServerClearRecord(
        tool_use_ids=list(batch.sizes), tokens_saved=batch.tokens, trigger=batch.trigger, sizes=dict(batch.sizes)
    )


def frontier(
    view: list[Message], state: PipelineState, clearable: Clearable, cleared: set[str] | dict[str, int]
) -> str | None:
    """The entry holding the oldest clearable result not in `cleared` (the set the cached prefix
    was written with): where the next batch starts."""
    if not (state.config.server_clear and state.config.main_thread):
        return None
    first = next((index for index, tid in clearable if tid not in cleared), None)
    return view[first].uuid if first is not None else None
