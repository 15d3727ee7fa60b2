"""What the peers' summarizing strategies share: asking for a summary and installing the result.

Every strategy that summarizes uses our compaction request (the same nine-section prompt, sent
through the same request builder, answered by the emulator's summarizer of the run's condition) and carries the summary
in the same continuation message, so the strategies differ only in when they summarize, what
they summarize and what they keep verbatim. The result is written to the history the way our own
compaction writes it: a `compact_boundary`, then the new entries; a kept tail stays where it is
and the boundary names where it starts (`keptFromUuid`), so `BoundarySlice` builds the view.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from agent_repl.context.compact import CompactionOutcome
from agent_repl.context.compact_prompt import continuation_message, extract_summary, summary_request
from agent_repl.context.compaction_sizes import SUMMARY_MAX_TOKENS, is_typed_prompt
from agent_repl.context.fork import append_question
from agent_repl.context.normalize import normalize_drafts
from agent_repl.context.shrink import drop_oldest_rounds, prompt_too_long_gap
from agent_repl.context.thinking import leave_out_stale_thinking, recorded_prefixes
from agent_repl.core.api.client import ModelResponse
from agent_repl.core.api.failures import CompactTrigger, is_prompt_too_long
from agent_repl.core.api.request import build_request
from agent_repl.core.model.messages import Message, SystemMessage, TextBlock, UserMessage

if TYPE_CHECKING:
    from agent_repl.session import Session

MAX_TRIM_RETRIES = 3


def chars_over_four(text: str) -> int:
    """The peers' own estimate (OpenCode `Token.estimate`, Gemini's, Codex's bytes/4)."""
    return len(text.encode("utf-8")) // 4


def entry_chars(message: Message) -> int:
    """An entry's size as the peers measure history: the length of its JSON."""
    if isinstance(message, SystemMessage):
        return 0
    return len(json.dumps([b.model_dump(mode="json", exclude_none=True) for b in _blocks(message)]))


def _blocks(message: Message) -> list[Any]:
    return message.blocks() if isinstance(message, UserMessage) else list(getattr(message, "content", []))


def typed_prompts(view: list[Message]) -> list[UserMessage]:
    return [m for m in view if is_typed_prompt(m)]  # type: ignore[misc]


def opening_context(session: Session) -> UserMessage | None:
    """The session's opening meta message (date, git state): every peer re-sends its initial context."""
    first = session.messages[0] if session.messages else None
    return first if isinstance(first, UserMessage) and first.is_meta else None


async def _send(session: Session, wire: list[dict[str, Any]]) -> ModelResponse:
    body = build_request(
        model=session.model,
        max_tokens=SUMMARY_MAX_TOKENS,
        system=session.system_prompt,
        tools=session.tool_definitions,
        messages=wire,
    )
    response: ModelResponse | None = None
    async for item in session.client.stream(body):
        if isinstance(item, ModelResponse):
            response = item
    assert response is not None, "the stream ended without a final message"
    session.add_usage(response.usage, response.model)
    return response


async def ask_for_summary(
    session: Session, part: list[Message], *, previous_summary: str | None = None
) -> str:
    """The summary of `part` (a slice of the view). With `previous_summary`, the second "probe" call
    Gemini makes: the same history, the first summary as the model's reply, then the request again.
    On prompt-too-long the oldest API rounds are dropped and the request retried, as Codex does."""
    # A slice of the history may change the prefix of its thinking blocks: those the API would
    # refuse are left out, exactly as the pipeline does for the main requests.
    config = session.projector.state.config  # type: ignore[attr-defined]
    kept = leave_out_stale_thinking(normalize_drafts(part), config.prompt_seed, recorded_prefixes(part))
    wire = [{"role": d.role, "content": d.content} for d in kept.drafts]
    if previous_summary is not None:
        wire = [*wire, {"role": "assistant", "content": [{"type": "text", "text": previous_summary}]}]
    for attempt in range(MAX_TRIM_RETRIES + 1):
        try:
            response = await _send(session, append_question(wire, summary_request()))
            break
        except Exception as exc:
            if not is_prompt_too_long(exc) or attempt == MAX_TRIM_RETRIES:
                raise
            gap = prompt_too_long_gap(exc)
            # Peers drop the oldest items outright (codex: "oldest items removed"); ours keeps user text.
            wire = drop_oldest_rounds(
                wire, gap, lambda m: chars_over_four(json.dumps(m["content"])), carry_user_text=False
            )
    text = "".join(b.text for b in response.content if isinstance(b, TextBlock))
    return extract_summary(text)


async def install(
    session: Session,
    *,
    strategy: str,
    trigger: CompactTrigger,
    before: int,
    summary: str,
    verbatim: list[Message] | None = None,
    kept_from: str | None = None,
) -> CompactionOutcome:
    """Append the boundary, the opening context, `verbatim` entries and the summary message."""
    boundary = SystemMessage(
        subtype="compact_boundary",
        content="Conversation compacted",
        metadata={"trigger": trigger, "preTokens": before, "keptFromUuid": kept_from, "strategy": strategy},
        logical_parent_uuid=session.last_uuid,
    )
    opening = opening_context(session)
    new: list[Message] = [boundary]
    if opening is not None:
        new.append(UserMessage(content=opening.content, is_meta=True))
    new += verbatim or []
    new.append(UserMessage(content=continuation_message(summary), is_compact_summary=True))
    for message in new:
        await session.append(message)
    state = session.projector.state  # type: ignore[attr-defined]
    # The last usage described the old view; until the next reply, estimate the new one afresh.
    state.tokens.last_usage = None
    state.tokens.last_usage_anchor = None
    after = session.projector.project(session.messages, dry_run=True).estimated_tokens
    message = f"{strategy}: compacted ~{before:,} -> ~{after:,} tokens"
    return CompactionOutcome(True, trigger, message, before, after, False, new)
