"""Which entries a collapse may take, and the `<collapsed>` entry that stands in for them (docs/architecture.md 5.5).

Spans are whole API rounds: a tool_use never leaves without its tool_result, nor part of one
streamed reply (`message_id`). Never the current turn, injected context (the session's opening
message), a compact summary or another collapse. A span's id and its `<collapsed>` entry's uuid
derive from its first and last entries, so the same span gives the same bytes every time.
"""

from __future__ import annotations

import hashlib
import uuid as uuid_module
from collections.abc import Iterable, Iterator

from agent_repl.context.collapse_summary import summarize_span
from agent_repl.context.estimate import estimate_messages
from agent_repl.context.rounds import index_of
from agent_repl.context.state import CollapsedSpan, PipelineState
from agent_repl.core.model.messages import Message, SystemMessage, UserMessage

# A span closes once it holds this share of the effective window (at least MIN_SPAN_TOKENS).
SPAN_SHARE = 0.10
MIN_SPAN_TOKENS = 1_000
COLLAPSED_OPEN = "<collapsed>\n"
COLLAPSED_CLOSE = "\n</collapsed>"
_NAMESPACE = uuid_module.UUID("6f1d2c1e-3a51-4d0b-9c8e-2f7f0b6c1a55")


# --- Spans and their `<collapsed>` entry ------------------------------------------------------


def collapse_id_for(start_uuid: str, end_uuid: str) -> str:
    return "collapse-" + hashlib.sha256(f"{start_uuid}\n{end_uuid}".encode()).hexdigest()[:16]


def placeholder_uuid(collapse_id: str) -> str:
    return str(uuid_module.uuid5(_NAMESPACE, collapse_id))


def placeholder_for(span: CollapsedSpan, cache: dict[str, UserMessage] | None = None) -> UserMessage:
    """The user entry the view shows instead of the span: the same uuid and text every time."""
    cached = cache.get(span.collapse_id) if cache is not None else None
    if cached is not None:
        return cached
    text = f"{COLLAPSED_OPEN}{span.summary}{COLLAPSED_CLOSE}"
    message = UserMessage(uuid=placeholder_uuid(span.collapse_id), content=text, timestamp="")
    if cache is not None:
        cache[span.collapse_id] = message
    return message


def is_placeholder(message: Message) -> bool:
    return (
        isinstance(message, UserMessage)
        and isinstance(message.content, str)
        and message.content.startswith(COLLAPSED_OPEN)
    )


def is_barrier(message: Message) -> bool:
    """Entries no span may hold: injected context (the session's opening one), compact summaries,
    and the `<collapsed>` entries of other spans."""
    return isinstance(message, UserMessage) and (
        message.is_meta or message.is_compact_summary or is_placeholder(message)
    )


def make_span(entries: Iterable[Message], summary: str) -> CollapsedSpan | None:
    """The span over `entries` (view order); system entries stay in the view. None if nothing is left."""
    members = [m for m in entries if not isinstance(m, SystemMessage) and not is_barrier(m)]
    if not members:
        return None
    start, end = members[0].uuid, members[-1].uuid
    return CollapsedSpan(collapse_id_for(start, end), start, end, summary, frozenset(m.uuid for m in members))


def span_saving(span: CollapsedSpan, by_uuid: dict[str, Message], state: PipelineState) -> int:
    """Estimated tokens the span frees in this view: its entries out, its `<collapsed>` entry in."""
    members = [by_uuid[u] for u in span.uuids if u in by_uuid]
    if not members:
        return 0
    return estimate_messages(members, state) - estimate_messages([placeholder_for(span)], state)


def candidate_spans(
    view: list[Message], state: PipelineState, taken: set[str], *, partial: bool = True
) -> Iterator[tuple[CollapsedSpan, int]]:
    """Eligible spans, oldest first, with what each would save; `taken` entries (staged) are skipped.

    A span gathers whole rounds until it holds about a tenth of the effective window; an entry that
    may not be collapsed closes it. The last one, cut short by the current turn, only with `partial`
    (it would grow if it waited). Only spans that save tokens are offered.
    """
    by_uuid = {m.uuid: m for m in view}
    target = max(MIN_SPAN_TOKENS, SPAN_SHARE * state.config.effective_window)
    current: list[Message] = []
    size = 0

    def finish() -> tuple[CollapsedSpan, int] | None:
        span = make_span(current, summarize_span(current))
        if span is None:
            return None
        saving = span_saving(span, by_uuid, state)
        return (span, saving) if saving > 0 else None

    rounds = index_of(view, state)
    for a, b in rounds.segments(rounds.latest_prompt_index()):
        entries = view[a:b]
        if any(is_barrier(m) or m.uuid in taken for m in entries):
            found = finish() if current else None
            current, size = [], 0
            if found:
                yield found
            continue
        current.extend(entries)
        size += estimate_messages(entries, state)
        if size >= target:
            found = finish()
            current, size = [], 0
            if found:
                yield found
    if current and partial:
        found = finish()
        if found:
            yield found
