"""A request flattened into the prompt the model reads, one slot per cacheable unit.

Order is tools -> system -> messages (§4.1): one slot per tool definition, system text block
and message content block. Each slot keeps two views of its block: `identity`, what the
prefix hash sees, and `seen`, what the model reads and is billed for. They differ only after a
cache edit deletes a tool result (the hash keeps the original so the cached prefix still
matches); edits that change the prompt for real change both.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_repl.emulator.blocks import (
    Block,
    breakpoint_ttl,
    canonical_json,
    content_blocks,
    digest,
    has_image,
    is_cacheable,
    strip_bookkeeping,
    system_blocks,
)
from agent_repl.emulator.deferred import expand_references, is_deferred, tool_catalog
from agent_repl.emulator.tokens import TokenCounter

Section = Literal["tools", "system", "messages"]

# Prompt-affecting parameters by the level of the cache they invalidate (§4.1 table).
_SYSTEM_LEVEL_PARAMS = ("speed",)
_MESSAGE_LEVEL_PARAMS = ("tool_choice", "thinking", "output_config")
# Parameters whose change makes a cache-miss diagnosis "unavailable" (§4.8).
DIAGNOSIS_PARAMS = ("tool_choice", "thinking", "context_management", "output_config", "speed")


@dataclass
class Slot:
    section: Section
    message_index: int  # -1 for tools and system
    block_index: int
    identity: Block | None  # None: dropped from the prompt
    seen: Block | None  # None: dropped, or (with identity kept) nothing visible
    ttl: str | None = None  # explicit breakpoint on this block
    cache_reference: str | None = None

    @property
    def kind(self) -> str:
        block = self.seen if self.seen is not None else self.identity
        return str(block.get("type", "")) if block else ""


@dataclass
class DraftMessage:
    role: str
    slots: list[Slot]


@dataclass
class CacheEditBlock:
    message_index: int
    block_index: int
    block: Block


@dataclass
class Draft:
    """The mutable working copy that cache edits and context management rewrite."""

    tools: list[Slot]
    system: list[Slot]
    messages: list[DraftMessage]
    edit_blocks: list[CacheEditBlock] = field(default_factory=list)

    def slots(self) -> list[Slot]:
        return [*self.tools, *self.system, *(s for m in self.messages for s in m.slots)]


def draft_prompt(body: dict[str, Any]) -> Draft:
    # A deferred tool is not in the prompt until a tool_reference loads it (agent_repl.emulator.deferred).
    tools = [
        Slot("tools", -1, i, strip_bookkeeping(t), strip_bookkeeping(t), breakpoint_ttl(t))
        for i, t in enumerate(body.get("tools") or [])
        if isinstance(t, dict) and not is_deferred(t)
    ]
    catalog = tool_catalog(body)
    system = [
        Slot("system", -1, i, strip_bookkeeping(b), strip_bookkeeping(b), breakpoint_ttl(b))
        for i, b in enumerate(system_blocks(body.get("system")))
    ]
    messages: list[DraftMessage] = []
    edit_blocks: list[CacheEditBlock] = []
    for m_index, message in enumerate(body.get("messages") or []):
        if not isinstance(message, dict):
            continue
        slots: list[Slot] = []
        for b_index, block in enumerate(content_blocks(message.get("content"))):
            if block.get("type") == "cache_edits":
                edit_blocks.append(CacheEditBlock(m_index, b_index, block))
                continue
            clean = expand_references(strip_bookkeeping(block), catalog)
            reference = block.get("cache_reference")
            slots.append(
                Slot(
                    "messages",
                    m_index,
                    b_index,
                    clean,
                    clean,
                    breakpoint_ttl(block),
                    reference if isinstance(reference, str) else None,
                )
            )
        messages.append(DraftMessage(str(message.get("role", "user")), slots))
    return Draft(tools, system, messages, edit_blocks)


def slot_tokens(slot: Slot, counter: TokenCounter) -> int:
    if slot.seen is None:
        return 0
    if slot.section == "tools":
        return counter.count_tool(slot.seen)
    return counter.count_block(slot.seen)


def draft_tokens(draft: Draft, counter: TokenCounter) -> int:
    return sum(slot_tokens(s, counter) for s in draft.slots())


@dataclass(frozen=True)
class Position:
    """One block of the rendered prompt, with the hash and tokens of the prefix through it."""

    section: Section
    cum_hash: bytes
    cum_tokens: int
    ttl: str | None
    cacheable: bool


@dataclass(frozen=True)
class PromptView:
    positions: tuple[Position, ...]
    total_tokens: int
    # Digest of the parameters that make a diagnosis "unavailable" when they change.
    params_digest: bytes
    # Hash over what the model sees (for "same request again" memos).
    conversation_key: str


def _salts(body: dict[str, Any], model_id: str, any_image: bool) -> tuple[bytes, bytes, bytes, bytes]:
    seed = hashlib.sha256(f"agent-repl emulator prefix v1\n{model_id}".encode()).digest()
    system_params = canonical_json({k: body.get(k) for k in _SYSTEM_LEVEL_PARAMS})
    message_params = canonical_json(
        {"params": {k: body.get(k) for k in _MESSAGE_LEVEL_PARAMS}, "images": any_image}
    )
    system_salt = hashlib.sha256(b"system" + system_params.encode()).digest()
    message_salt = hashlib.sha256(b"messages" + system_params.encode() + message_params.encode()).digest()
    return seed, b"tools", system_salt, message_salt


def render(
    draft: Draft, body: dict[str, Any], model_id: str, betas: frozenset[str], counter: TokenCounter
) -> PromptView:
    """Turn the (edited) draft into cache positions with cumulative hashes and tokens."""
    live = [s for s in draft.slots() if s.identity is not None]
    any_image = any(s.section == "messages" and s.seen is not None and has_image(s.seen) for s in live)
    cum_hash, tools_salt, system_salt, message_salt = _salts(body, model_id, any_image)
    salt_for = {"tools": tools_salt, "system": system_salt, "messages": message_salt}
    conversation = hashlib.sha256()
    positions: list[Position] = []
    cum_tokens = 0
    for slot in live:
        assert slot.identity is not None
        identity_digest = digest(slot.identity)
        seen_digest = (
            identity_digest if slot.seen is slot.identity else (digest(slot.seen) if slot.seen else b"")
        )
        if slot.seen is not None:
            if slot.section == "tools":
                cum_tokens += counter.count_tool(slot.seen, key=seen_digest)
            else:
                cum_tokens += counter.count_block(slot.seen, key=seen_digest)
        cum_hash = hashlib.sha256(cum_hash + salt_for[slot.section] + identity_digest).digest()
        conversation.update(f"{slot.section}:{slot.message_index}:".encode() + seen_digest)
        positions.append(
            Position(
                slot.section,
                cum_hash,
                cum_tokens,
                slot.ttl,
                slot.seen is not None and is_cacheable(slot.seen),
            )
        )
    params = {k: body.get(k) for k in DIAGNOSIS_PARAMS}
    params["betas"] = sorted(betas)
    return PromptView(tuple(positions), cum_tokens, digest(params), conversation.hexdigest())


def visible_body(draft: Draft, body: dict[str, Any]) -> dict[str, Any]:
    """The request as the model reads it: edits applied, bookkeeping fields removed."""
    visible = {
        k: v for k, v in body.items() if k not in ("cache_control", "context_management", "diagnostics")
    }
    if "tools" in body:
        visible["tools"] = [s.seen for s in draft.tools if s.seen is not None]
    if "system" in body:
        visible["system"] = [s.seen for s in draft.system if s.seen is not None]
    messages = []
    for message in draft.messages:
        content = [s.seen for s in message.slots if s.seen is not None]
        if content:
            messages.append({"role": message.role, "content": content})
    visible["messages"] = messages
    return visible
