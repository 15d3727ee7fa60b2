"""Preserved thinking: the checks a thinking block sent back must pass, and how new ones are bound.

Each block's signature names the model that made it and the prefix it was produced after: the
top-level `system`, the non-deferred `tools` and every message block before it (a running hash,
`PrefixChain`, over role and block, so merging consecutive same-role messages changes nothing and
cache markers are ignored). A block the current model cannot read is dropped without an error.
On models with preserved thinking, a block whose prefix changed fails, and so does every later
one (the chain of what is kept no longer matches theirs): the request gets the documented 400,
or, with `thinking.block_binding.prefix_mismatch_behavior: "drop_block"` (beta
`thinking-binding-controls-2026-08-01`), the failing blocks are dropped and listed in
`input_transformations`. A signed on-demand `compaction` block first in `messages` stands for the
messages it summarized: the chain resumes from the state recorded in its signature, so thinking
in the turns kept after it stays valid.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_repl.emulator.blocks import Block, digest, strip_bookkeeping, system_blocks
from agent_repl.emulator.models import ModelSpec
from agent_repl.emulator.prompt import Draft, Slot
from agent_repl.emulator.request_error import EmulatorRequestError
from agent_repl.emulator.signatures import (
    HEAD_BYTES,
    PREFIX_BYTES,
    Binding,
    content_digest,
    read_compaction_signature,
    read_thinking_signature,
)

THINKING_BINDING_BETA = "thinking-binding-controls-2026-08-01"
_SEED = hashlib.sha256(b"agent-repl emulator prefix chain v1").digest()
PrefixMismatch = Literal["error", "drop_block", "allow"]


def bound_to_a_different_conversation(path: str, why: str) -> str:
    """The 400 text for a block that failed the prefix check (fix-bound-to-a-different-conversation)."""
    return (
        f"{path}: Invalid `signature` in `thinking` block. The block is bound to a different conversation. "
        'Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block". '
        f"That setting requires the `{THINKING_BINDING_BETA}` value in the `anthropic-beta` header. {why}"
    )


def invalid_signature(path: str) -> str:
    return f"{path}: Invalid `signature` in `thinking` block"


class PrefixChain:
    """A running hash over (role, block) of everything before some point of the prompt."""

    def __init__(self, state: bytes = _SEED) -> None:
        self.state = state

    def extend(self, role: str, block: Block) -> None:
        self.state = hashlib.sha256(self.state + role.encode() + b"\0" + digest(chain_identity(block))).digest()

    def copy(self) -> PrefixChain:
        return PrefixChain(self.state)


def chain_identity(block: Block) -> Block:
    """What the chain sees of a block: thinking by the digest its signature carries (the text a
    client sends back may be empty or summarized), everything else without cache bookkeeping."""
    if block.get("type") == "thinking":
        signed = read_thinking_signature(str(block.get("signature", "")))
        marker = signed.content.hex() if signed else content_digest(str(block.get("thinking", ""))).hex()
        return {"type": "thinking", "content": marker}
    return strip_bookkeeping(block)


def system_digest(body: dict[str, Any]) -> bytes:
    return digest([strip_bookkeeping(b) for b in system_blocks(body.get("system"))])[:HEAD_BYTES]


def tools_digest(body: dict[str, Any]) -> bytes:
    tools = [strip_bookkeeping(t) for t in body.get("tools") or [] if isinstance(t, dict) and not t.get("defer_loading")]
    return digest(tools)[:HEAD_BYTES]


@dataclass
class BindingState:
    """The request's binding context: what a new thinking block in the reply is bound to."""

    system: bytes
    tools: bytes
    chain: PrefixChain
    transformations: list[dict[str, Any]] = field(default_factory=list)

    def binding(self, chain: PrefixChain | None = None) -> Binding:
        return Binding(self.system, self.tools, (chain or self.chain).state[:PREFIX_BYTES])


def mismatch_behavior(body: dict[str, Any], betas: frozenset[str], *, enforced_by_default: bool) -> PrefixMismatch:
    thinking = body.get("thinking")
    binding = thinking.get("block_binding") if isinstance(thinking, dict) else None
    if isinstance(binding, dict) and binding.get("prefix_mismatch_behavior") is not None:
        if THINKING_BINDING_BETA not in betas:
            raise EmulatorRequestError(
                f"thinking.block_binding: requires the `{THINKING_BINDING_BETA}` value in the `anthropic-beta` header"
            )
        value = binding["prefix_mismatch_behavior"]
        if value not in ("error", "drop_block"):
            raise EmulatorRequestError(
                "thinking.block_binding.prefix_mismatch_behavior: Input should be 'error' or 'drop_block'"
            )
        return value
    return "error" if enforced_by_default else "allow"


def _why(signed_binding: Binding, state: BindingState) -> str:
    if signed_binding.system != state.system:
        return "The `system` prompt differs from the one this block was created with."
    if signed_binding.tools != state.tools:
        return "The `tools` differ from the ones this block was created with."
    return "A message before this block differs from the conversation this block was created in."


def _drop(slot: Slot, state: BindingState, reason: str) -> None:
    slot.identity = slot.seen = None
    state.transformations.append({"type": "thinking_dropped", "path": _path(slot), "reason": reason})


def _path(slot: Slot) -> str:
    return f"messages.{slot.message_index}.content.{slot.block_index}"


def check_thinking(
    draft: Draft,
    body: dict[str, Any],
    spec: ModelSpec,
    model_ids: list[str],
    betas: frozenset[str],
    *,
    enforced_by_default: bool = True,
) -> BindingState:
    """Check every thinking block of the request (dropping or refusing those that fail) and
    return what the reply's own thinking will be bound to."""
    behavior = mismatch_behavior(body, betas, enforced_by_default=enforced_by_default)
    state = BindingState(system_digest(body), tools_digest(body), PrefixChain())
    first = True
    for message in draft.messages:
        for slot in message.slots:
            block = slot.identity
            if block is None:
                continue
            kind = block.get("type")
            if kind == "compaction":
                _resume_from_compaction(slot, state, spec, model_ids, first=first)
            elif kind == "thinking":
                _check_block(slot, message.role, state, spec, model_ids, behavior)
            else:
                state.chain.extend(message.role, block)
            first = False
    return state


def _resume_from_compaction(
    slot: Slot, state: BindingState, spec: ModelSpec, model_ids: list[str], *, first: bool
) -> None:
    block = slot.identity or {}
    if not first:
        raise EmulatorRequestError(
            f"{_path(slot)}: a `compaction` block must be the first block of the conversation"
        )
    content = block.get("content")
    if content is None:
        return  # a failed compaction round-trips as a no-op
    signed = read_compaction_signature(str(block.get("signature") or ""), str(content), model_ids)
    if signed is None:
        raise EmulatorRequestError(f"{_path(slot)}.signature: Invalid `signature` in `compaction` block")
    if signed.preserved and spec.preserved_thinking:
        state.chain = PrefixChain(signed.chain)
    else:
        state.chain.extend("assistant", block)


def _check_block(
    slot: Slot,
    role: str,
    state: BindingState,
    spec: ModelSpec,
    model_ids: list[str],
    behavior: PrefixMismatch,
) -> None:
    block = slot.identity or {}
    signed = read_thinking_signature(str(block.get("signature", "")))
    if signed is None:
        raise EmulatorRequestError(invalid_signature(_path(slot)))
    text = str(block.get("thinking", ""))
    if text and content_digest(text) != signed.content:
        raise EmulatorRequestError(invalid_signature(_path(slot)))
    if not signed.made_by(spec.id):
        if signed.model_among(model_ids) is None:
            raise EmulatorRequestError(invalid_signature(_path(slot)))
        _drop(slot, state, "model_binding_mismatch")  # unreadable for this model: dropped, no error
        return
    if spec.preserved_thinking and signed.binding != state.binding():
        if behavior == "error":
            raise EmulatorRequestError(bound_to_a_different_conversation(_path(slot), _why(signed.binding, state)))
        if behavior == "drop_block":
            _drop(slot, state, "prefix_binding_mismatch")
            return
        state.transformations.append(
            {"type": "thinking_mismatch_allowed", "path": _path(slot), "reason": "prefix_binding_mismatch"}
        )
    state.chain.extend(role, block)
