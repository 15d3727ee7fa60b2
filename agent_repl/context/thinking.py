"""Leaving out of the view the thinking blocks whose prefix changed (docs/architecture.md 6.2).

Runs on the wire drafts after normalization: walking the drafts in order with the same prefix
chain the loop used when each block arrived (`agent_repl.core.api.thinking_prefix`), a thinking
block stays only where the chain still has the value its entry recorded. So the first wire
position any edit changed is where thinking stops; later blocks produced before the edit go
too (their recorded chain included what changed), blocks produced after it stay. Deterministic:
the same history and records give the same view, on resume as live. The history keeps them all.

The same walk tells whether the last usage still describes the view: only when the chain after
the reply it came with is what that reply recorded (never for a foreign transcript, whose
entries record nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_repl.context.normalize import WireDraft
from agent_repl.core.api.thinking_prefix import (
    THINKING_KINDS,
    BlockDigests,
    PrefixChain,
    digest_after,
    resumed_from,
    thinking_key,
)
from agent_repl.core.model.messages import (
    AssistantMessage,
    CompactionBlock,
    Message,
    RedactedThinkingBlock,
    ThinkingBlock,
    wire_block,
)


def recorded_prefixes(view: list[Message]) -> dict[str, str]:
    """Thinking key (or compaction signature) -> the prefix digest its entry recorded."""
    recorded: dict[str, str] = {}
    for message in view:
        if not isinstance(message, AssistantMessage) or message.prefix_digest is None:
            continue
        for block in message.content:
            if isinstance(block, CompactionBlock | ThinkingBlock):
                key = block.signature
            elif isinstance(block, RedactedThinkingBlock):
                key = block.data
            else:
                continue
            if key:
                recorded[key] = message.prefix_digest
    return recorded


@dataclass(frozen=True)
class ThinkingOutcome:
    drafts: list[WireDraft]
    left_out: int
    # The first wire message that lost a block (the first position an edit changed), or None.
    first_changed: int | None
    # The chain value at the end of each draft.
    chain_after: list[str]

    def describes(self, anchor: Message | None) -> bool:
        """Whether everything up to `anchor` (the last reply's last entry) is as it was sent."""
        if (
            not isinstance(anchor, AssistantMessage)
            or anchor.prefix_digest is None
            or len(anchor.content) != 1
            or anchor.is_api_summary
        ):
            return False
        at = next((i for i, d in enumerate(self.drafts) if anchor.uuid in d.sources), None)
        if at is None or self.drafts[at].role != "assistant":
            return False
        return self.chain_after[at] == digest_after(anchor.prefix_digest, "assistant", wire_block(anchor.content[0]))


def _merge_same_role(drafts: list[WireDraft], chain_after: list[str]) -> tuple[list[WireDraft], list[str]]:
    merged: list[WireDraft] = []
    after: list[str] = []
    for draft, value in zip(drafts, chain_after, strict=True):
        if merged and merged[-1].role == draft.role:
            merged[-1].content.extend(draft.content)
            merged[-1].sources.extend(draft.sources)
            after[-1] = value
        else:
            merged.append(draft)
            after.append(value)
    return merged, after


def leave_out_stale_thinking(
    drafts: list[WireDraft], seed: str, recorded: dict[str, str], memo: BlockDigests | None = None
) -> ThinkingOutcome:
    chain = PrefixChain(seed, memo)
    kept: list[WireDraft] = []
    after: list[str] = []
    left_out = 0
    first: int | None = None
    for index, draft in enumerate(drafts):
        content: list[dict[str, Any]] = []
        for position, block in enumerate(draft.content):
            kind = block.get("type")
            if kind in THINKING_KINDS:
                key = thinking_key(block)
                if key is not None and recorded.get(key) == chain.value:
                    chain.extend(draft.role, block)
                    content.append(block)
                else:
                    left_out += 1
                    first = index if first is None else first
                continue
            resumed = resumed_from(block, seed, recorded) if index == 0 and position == 0 else None
            if resumed is not None:
                chain.resume(resumed)  # the API's summary stands for the messages it replaced
            else:
                chain.extend(draft.role, block)
            content.append(block)
        if content:
            kept.append(WireDraft(draft.role, content, list(draft.sources), draft.message_id))
            after.append(chain.value)
    if not left_out:
        return ThinkingOutcome(drafts, 0, None, after)
    merged, merged_after = _merge_same_role(kept, after)
    return ThinkingOutcome(merged, left_out, first, merged_after)


def without_thinking(wire: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The wire with every thinking block removed (for a request whose messages were rewritten)."""
    stripped: list[dict[str, Any]] = []
    for message in wire:
        content = [b for b in message["content"] if b.get("type") not in THINKING_KINDS]
        if content:
            if stripped and stripped[-1]["role"] == message["role"]:
                stripped[-1] = {**stripped[-1], "content": [*stripped[-1]["content"], *content]}
            else:
                stripped.append({**message, "content": content})
    return stripped
