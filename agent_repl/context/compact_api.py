"""Compaction by the API itself (on-demand compaction, beta `compact-2026-09-04`), where the model
takes it: the model's own summary replaces the older part of the view, and the turns kept after it
keep their thinking (the API accepts them as if the summarized messages were still there).

The request sends the view up to the kept tail, with `compaction: {"type": "summarize"}`; the
reply is one signed `compaction` block (`stop_reason: "compaction"`), stored as an assistant
entry that opens the view after the boundary, first in `messages` on every later request. The
kept tail starts at a typed prompt right after a finished reply, so it follows the summarized
messages directly and unchanged; otherwise everything is summarized.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_repl.core.api.client import ModelResponse
from agent_repl.core.api.request import build_request
from agent_repl.core.api.thinking_prefix import reply_prefixes
from agent_repl.core.loop.projection import Projection
from agent_repl.core.model.messages import AssistantMessage, CompactionBlock, Message, UserMessage, wire_block

if TYPE_CHECKING:
    from agent_repl.context.context_session import ContextSession


class ApiCompactionError(Exception):
    pass


def split_for_kept_turns(projection: Projection, kept_from: Message | None) -> int:
    """The wire index where the kept turns start: the wire message that begins with `kept_from`
    (a typed prompt) right after a finished reply; the whole wire when there is no such place."""
    wire, sources = projection.wire, projection.wire_sources
    if not isinstance(kept_from, UserMessage):
        return len(wire)
    for index, message_sources in enumerate(sources):
        if message_sources and message_sources[0] == kept_from.uuid:
            previous = wire[index - 1] if index else None
            finished = previous is not None and previous["role"] == "assistant" and not any(
                b.get("type") == "tool_use" for b in previous["content"]
            )
            return index if finished else len(wire)
    return len(wire)


async def api_summary(
    session: ContextSession, projection: Projection, split: int, instructions: str | None, *, max_tokens: int
) -> AssistantMessage:
    """Ask the API to summarize `projection.wire[:split]`; the summary as a history entry."""
    wire = projection.wire[:split]
    if not wire:
        raise ApiCompactionError("nothing to summarize")
    config: dict[str, Any] = {"type": "summarize"}
    if instructions and instructions.strip():
        config["instructions"] = instructions.strip()
    # On-demand compaction cannot be combined with context editing.
    extras = {k: v for k, v in projection.body_extras.items() if k != "context_management"}
    body = build_request(
        model=session.model,
        max_tokens=max_tokens,
        system=session.system_prompt,
        tools=session.request_tools(projection.loaded_tools),
        messages=wire,
        extra={**extras, "compaction": config},
    )
    response: ModelResponse | None = None
    async for item in session.client.stream(body):
        if isinstance(item, ModelResponse):
            response = item
    assert response is not None, "the stream ended without a final message"
    session.add_usage(response.usage, response.model)
    blocks = [b for b in response.content if isinstance(b, CompactionBlock)]
    if response.stop_reason != "compaction" or len(blocks) != 1 or not blocks[0].content:
        raise ApiCompactionError(f"the API returned no summary (stop reason {response.stop_reason})")
    [prefix] = reply_prefixes(projection.prompt_seed, projection.chain_after[split - 1], [wire_block(blocks[0])])
    return AssistantMessage(
        message_id=response.message_id,
        model=response.model,
        content=[blocks[0]],
        stop_reason="compaction",
        usage=response.usage,
        request_id=response.request_id,
        prefix_digest=prefix,
    )
