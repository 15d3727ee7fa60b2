"""Which thinking blocks may still be sent back (preserved thinking).

On models with preserved thinking the API accepts a thinking block only while its prefix (the
model, `system`, `tools` and every message block before it) is what it was when the block was
produced; a block whose prefix changed fails, and so does every later one. So each thinking
block's history entry records the digest of the prefix it came after (`reply_prefixes`, at the
time of the reply), and the view keeps a block only where the digest of what comes before it
now is the same (`keep_valid_thinking`): the first wire position any edit changed (a summary,
a snip, a cleared result, a collapse, dropped rounds, a new system prompt, another model) is
where thinking stops being sent. The history keeps every block; the same history and records
give the same view on resume.

A compaction block the API wrote records the digest after the messages it summarized: the API
accepts the turns kept after it as if those messages were still there, and so does this chain.
The same digests tell whether the last usage still describes the view (`agent_repl.context.thinking`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

THINKING_KINDS = frozenset({"thinking", "redacted_thinking"})
_BOOKKEEPING = frozenset({"cache_control", "cache_reference"})


def _clean(block: Mapping[str, Any]) -> dict[str, Any]:
    clean = {k: v for k, v in block.items() if k not in _BOOKKEEPING}
    inner = clean.get("content")
    if isinstance(inner, list):
        clean["content"] = [_clean(b) if isinstance(b, Mapping) else b for b in inner]
    return clean


def _digest(value: Any) -> bytes:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()).digest()


def thinking_key(block: Mapping[str, Any]) -> str | None:
    """What identifies one thinking block across turns: its signature (or redacted data)."""
    if block.get("type") == "thinking":
        return str(block.get("signature") or "") or None
    if block.get("type") == "redacted_thinking":
        return str(block.get("data") or "") or None
    return None


# Block identity -> (the block, its digest, the last chain step through it: role, state before, state after).
BlockDigests = dict[int, tuple[Mapping[str, Any], bytes, tuple[str, bytes, bytes]]]


class PrefixChain:
    """A running digest over the request header and then (role, block) for every block.

    `memo` keeps each block's own digest by identity, and the last step the chain took through it
    (wire blocks are shared between turns, so a turn hashes only what is new or moved); it holds
    the block, so an id is never reused while cached."""

    def __init__(self, seed: str, memo: BlockDigests | None = None) -> None:
        self.state = hashlib.sha256(seed.encode()).digest()
        self._memo = memo

    @property
    def value(self) -> str:
        return self.state.hex()

    def _step(self, role: str, digest: bytes) -> bytes:
        return hashlib.sha256(self.state + role.encode() + b"\0" + digest).digest()

    def extend(self, role: str, block: Mapping[str, Any]) -> None:
        if block.get("type") == "cache_edits":
            return  # an instruction to the cache, not part of the prompt
        if self._memo is None:
            self.state = self._step(role, _digest(_clean(block)))
            return
        hit = self._memo.get(id(block))
        if hit is not None and hit[0] is block:
            digest, (last_role, before, after) = hit[1], hit[2]
            if last_role == role and before == self.state:
                self.state = after
                return
        else:
            digest = _digest(_clean(block))
        after = self._step(role, digest)
        self._memo[id(block)] = (block, digest, (role, self.state, after))
        self.state = after

    def resume(self, value: str) -> None:
        self.state = bytes.fromhex(value)


def prefix_seed(body: Mapping[str, Any]) -> str:
    """The header part of the prefix: model, system and tools, without cache markers."""
    system = body.get("system")
    blocks = [{"type": "text", "text": system}] if isinstance(system, str) else list(system or [])
    header = {
        "model": body.get("model"),
        "system": [_clean(b) for b in blocks],
        "tools": [_clean(t) for t in body.get("tools") or [] if not t.get("defer_loading")],
    }
    return _digest(header).hex()


def resumed_from(block: Mapping[str, Any], seed: str, recorded: Mapping[str, str]) -> str | None:
    """For an API summary first in `messages`: the chain value after the messages it replaced,
    when it was made under this same header (else the kept turns' thinking no longer holds)."""
    if block.get("type") != "compaction":
        return None
    made_under, _, value = recorded.get(str(block.get("signature") or ""), "").partition(":")
    return value if value and made_under == seed else None


def reply_prefixes(seed: str, request: str, content: list[dict[str, Any]]) -> list[str]:
    """For each block of a reply: the digest of the prefix it was produced after, given `request`,
    the chain value after the request's messages (the projection's); for an API summary, also
    the header `seed` it came under."""
    chain = PrefixChain(seed)
    chain.resume(request)
    prefixes: list[str] = []
    for block in content:
        prefixes.append(f"{seed}:{chain.value}" if block.get("type") == "compaction" else chain.value)
        chain.extend("assistant", block)
    return prefixes


def digest_after(prefix: str, role: str, block: Mapping[str, Any]) -> str:
    """The chain value after `block`, given the value before it."""
    chain = PrefixChain("")
    chain.resume(prefix)
    chain.extend(role, block)
    return chain.value
