"""How long the prompt cache keeps what a request writes: 5 minutes or 1 hour, per breakpoint.

A 1-hour write costs 2x base input against 1.25x for 5 minutes; it pays when the user comes back
after more than 5 minutes and within the hour, since the next request then reads the prefix
instead of writing it all again. `PipelineConfig.cache_ttl` picks the lifetimes:

    "5m"         every breakpoint 5 minutes (the API's default)
    "1h"         every breakpoint 1 hour
    "prefix-1h"  1 hour up to the turn's prompt (what every request of the turn shares), 5 minutes
                 for the moving tail after it
    "auto"       "1h" once this session has seen a pause past `pause_minutes` between turns (a user
                 who pauses once is likely to again), "5m" until then

`cold_after_minutes` is when what the last main request wrote expires: the time-based clear runs
only past it, when the next request has to write the prefix again anyway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agent_repl.context.state import PipelineState, is_prompt
from agent_repl.core.api.request import CacheMarks
from agent_repl.core.model.messages import AssistantMessage, Message

FIVE_MINUTES = 5.0
ONE_HOUR = 60.0


def _long(history: list[Message], state: PipelineState, before: int) -> bool:
    """Whether the policy asks for 1-hour breakpoints on a request made at history length `before`."""
    policy = state.config.cache_ttl
    if policy == "auto":
        state.pauses.update(history, state.config.pause_minutes)
        return state.pauses.seen_before(before)
    return policy in ("1h", "prefix-1h")


def _wire_index(uuid: str | None, wire_sources: list[list[str]]) -> int | None:
    if uuid is None:
        return None
    return next((i for i in range(len(wire_sources) - 1, -1, -1) if uuid in wire_sources[i]), None)


def cache_marks(
    history: list[Message], wire: Sequence[Mapping[str, object]], wire_sources: list[list[str]], state: PipelineState,
    *, before: str | None = None,
) -> CacheMarks:
    """The breakpoints for the request built from `history` now: their lifetimes, and an extra
    one on the last user message before the wire message built from entry `before`."""
    at = _wire_index(before, wire_sources)
    anchor = next((i for i in range(at - 1, -1, -1) if wire[i]["role"] == "user"), None) if at else None
    if not _long(history, state, len(history)):
        return CacheMarks(anchor=anchor)
    last = len(wire_sources) - 1
    if state.config.cache_ttl != "prefix-1h":
        return CacheMarks(hour_until=last, anchor=anchor)
    prompt = next((m.uuid for m in reversed(history) if is_prompt(m)), None)
    turn = _wire_index(prompt, wire_sources)
    # One anchor only (a request holds four breakpoints): the turn's prompt wins.
    return CacheMarks(hour_until=turn, anchor=turn) if turn is not None else CacheMarks(anchor=anchor)


def cold_after_minutes(history: list[Message], state: PipelineState) -> float:
    """When what the last main request wrote expires, in minutes after its reply: an hour when its
    breakpoints had the 1-hour lifetime (with "prefix-1h", what is older than the turn keeps it,
    and a clear there would break it), else 5 minutes; the fixed gap without
    `clear_at_expiry`."""
    config = state.config
    if not config.clear_at_expiry:
        return config.cache_cold_gap_minutes
    last_reply = next((i for i in range(len(history) - 1, -1, -1) if isinstance(history[i], AssistantMessage)), None)
    if last_reply is None:
        return FIVE_MINUTES
    return ONE_HOUR if _long(history, state, last_reply) else FIVE_MINUTES
