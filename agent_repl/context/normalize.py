"""API normalization (docs/architecture.md 5.7): the projected view becomes wire messages.

Runs after every stage, just before the wire, and never changes the history: it builds new
dicts. Steps, in order: drop system entries; merge consecutive same-role entries (parallel tool
results stored as N entries become one wire message; a streamed reply split into entries
sharing `message_id` becomes one assistant message even when its tool results were stored
between its blocks); tag every non-meta user message with `[id:xxxxxx]`; drop thinking-only
replies and trailing thinking; and, last, repair tool pairing, so whatever a crash or an
interruption left behind, every tool_use reaches the API with exactly one tool_result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_repl.context.facts import wire_blocks
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
)

BlocksFor = Callable[[Message], Sequence[dict[str, Any]]]

INTERRUPTED_TOOL_RESULT = "[Tool call interrupted: no result was recorded for this call]"


@dataclass
class WireDraft:
    """A wire message being built, with the history uuids it came from."""

    role: str
    content: list[dict[str, Any]]
    sources: list[str] = field(default_factory=list)
    message_id: str | None = None


def _is_thinking(block: dict[str, Any]) -> bool:
    return block.get("type") in ("thinking", "redacted_thinking")


def _only_tool_results(draft: WireDraft) -> bool:
    return draft.role == "user" and all(b.get("type") == "tool_result" for b in draft.content)


def merge_into_wire(
    view: list[Message], *, tag_ids: bool = True, blocks_for: BlocksFor | None = None
) -> list[WireDraft]:
    """`blocks_for` gives an entry's wire blocks (memoized by the pipeline); drafts copy them."""
    if blocks_for is None:
        blocks_for = lambda message: wire_blocks(message, tag_ids)  # noqa: E731
    drafts: list[WireDraft] = []
    for message in view:
        if isinstance(message, SystemMessage):
            continue
        blocks = list(blocks_for(message))
        if isinstance(message, AssistantMessage):
            # A later block of the same streamed reply, stored after results of its earlier tool
            # calls, belongs to that reply: the API needs every result right after the reply.
            if (
                len(drafts) >= 2
                and drafts[-2].role == "assistant"
                and drafts[-2].message_id == message.message_id
                and _only_tool_results(drafts[-1])
            ):
                drafts[-2].content.extend(blocks)
                drafts[-2].sources.append(message.uuid)
                continue
            if drafts and drafts[-1].role == "assistant":
                drafts[-1].content.extend(blocks)
                drafts[-1].sources.append(message.uuid)
                drafts[-1].message_id = message.message_id
                continue
            drafts.append(WireDraft("assistant", blocks, [message.uuid], message.message_id))
            continue
        if drafts and drafts[-1].role == "user":
            drafts[-1].content.extend(blocks)
            drafts[-1].sources.append(message.uuid)
        else:
            drafts.append(WireDraft("user", blocks, [message.uuid]))
    for draft in drafts:
        if draft.role == "user" and len(draft.content) > 1:
            # The API wants tool results before any other block in a user message.
            results = [b for b in draft.content if b.get("type") == "tool_result"]
            others = [b for b in draft.content if b.get("type") != "tool_result"]
            draft.content = results + others
    return drafts


def drop_orphan_thinking(view: list[Message]) -> list[Message]:
    """Drop replies (grouped by `message_id`) that hold nothing but thinking: an interrupted stream."""
    replies = [m for m in view if isinstance(m, AssistantMessage)]
    substantive = {m.message_id for m in replies if any(b.type not in ("thinking", "redacted_thinking") for b in m.content)}
    if all(m.message_id in substantive for m in replies):
        return view
    return [m for m in view if not isinstance(m, AssistantMessage) or m.message_id in substantive]


def strip_trailing_thinking(drafts: list[WireDraft]) -> list[WireDraft]:
    """The last assistant message may not end with thinking."""
    if drafts and drafts[-1].role == "assistant":
        content = drafts[-1].content
        while content and _is_thinking(content[-1]):
            content.pop()
    return [d for d in drafts if d.content]


def _interrupted_result(tool_use_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": INTERRUPTED_TOOL_RESULT, "is_error": True}


def repair_tool_pairing(drafts: list[WireDraft]) -> list[WireDraft]:
    """Every tool_use gets exactly one tool_result in the next message; orphans and duplicates go."""
    repaired: list[WireDraft] = []
    seen_tool_use_ids: set[str] = set()
    for draft in drafts:
        if draft.role == "assistant":
            uses = [b["id"] for b in draft.content if b.get("type") == "tool_use"]
            if seen_tool_use_ids.isdisjoint(uses) and len(set(uses)) == len(uses):
                seen_tool_use_ids.update(uses)  # the common case: nothing to take out
                repaired.append(WireDraft("assistant", draft.content, draft.sources, draft.message_id))
                continue
            content = []
            for block in draft.content:
                if block.get("type") == "tool_use":
                    if block["id"] in seen_tool_use_ids:
                        continue
                    seen_tool_use_ids.add(block["id"])
                content.append(block)
            repaired.append(WireDraft("assistant", content, draft.sources, draft.message_id))
            continue
        previous = repaired[-1] if repaired and repaired[-1].role == "assistant" else None
        expected = [b["id"] for b in previous.content if b.get("type") == "tool_use"] if previous else []
        if [b.get("tool_use_id") for b in draft.content if b.get("type") == "tool_result"] == expected:
            # Every call answered once, in order (merging put the results first): kept as it is.
            repaired.append(WireDraft("user", draft.content, draft.sources))
            continue
        results: dict[str, dict[str, Any]] = {}
        others = []
        for block in draft.content:
            if block.get("type") == "tool_result":
                if block["tool_use_id"] in expected and block["tool_use_id"] not in results:
                    results[block["tool_use_id"]] = block
            else:
                others.append(block)
        ordered = [results.get(tid) or _interrupted_result(tid) for tid in expected]
        repaired.append(WireDraft("user", ordered + others, draft.sources))
    if repaired and repaired[-1].role == "assistant":
        pending = [b["id"] for b in repaired[-1].content if b.get("type") == "tool_use"]
        if pending:
            repaired.append(WireDraft("user", [_interrupted_result(tid) for tid in pending]))
    return [d for d in repaired if d.content]


def _resolved_reference(block: dict[str, Any], deferred: frozenset[str]) -> dict[str, Any]:
    if block.get("type") != "tool_reference" or block.get("tool_name") in deferred:
        return block
    return {"type": "text", "text": f"[Tool {block.get('tool_name')} is not a deferred tool of this request.]"}


def resolve_tool_references(drafts: list[WireDraft], deferred: frozenset[str]) -> None:
    """A tool_reference may only name a tool the request defers: one to a tool that is gone (a
    server removed since, a Claude Code transcript's) or sent loaded becomes a line of text."""
    for draft in drafts:
        if draft.role != "user" or not any(isinstance(b.get("content"), list) for b in draft.content):
            continue
        draft.content = [
            {**b, "content": [_resolved_reference(inner, deferred) for inner in b["content"]]}
            if b.get("type") == "tool_result" and isinstance(b.get("content"), list)
            and any(i.get("type") == "tool_reference" and i.get("tool_name") not in deferred for i in b["content"])
            else b
            for b in draft.content
        ]


def normalize_drafts(
    view: list[Message], *, tag_ids: bool = True, blocks_for: BlocksFor | None = None
) -> list[WireDraft]:
    merged = merge_into_wire(drop_orphan_thinking(view), tag_ids=tag_ids, blocks_for=blocks_for)
    return repair_tool_pairing(strip_trailing_thinking(merged))
