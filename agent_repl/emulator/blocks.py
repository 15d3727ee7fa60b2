"""Content-block helpers shared by the token counter, the cache simulator and the edits.

Everything here is pure: canonical JSON, digests, and copies of blocks with bookkeeping
fields (`cache_control`, `cache_reference`) removed.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

Block = dict[str, Any]

# Fields that steer caching but are not part of the rendered prompt.
BOOKKEEPING_KEYS = frozenset({"cache_control", "cache_reference"})
THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(value: Any) -> bytes:
    """A 32-byte sha256 of the canonical JSON of `value`."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).digest()


def strip_bookkeeping(block: Block) -> Block:
    """The block without `cache_control`/`cache_reference`, also inside a tool_result's content.

    Returns the same object when there is nothing to remove, so unchanged blocks cost no copy.
    """
    inner = block.get("content")
    inner_dirty = isinstance(inner, list) and any(
        isinstance(b, dict) and not BOOKKEEPING_KEYS.isdisjoint(b) for b in inner
    )
    if BOOKKEEPING_KEYS.isdisjoint(block) and not inner_dirty:
        return block
    clean = {k: v for k, v in block.items() if k not in BOOKKEEPING_KEYS}
    if inner_dirty and isinstance(inner, list):
        clean["content"] = [
            {k: v for k, v in b.items() if k not in BOOKKEEPING_KEYS} if isinstance(b, dict) else b
            for b in inner
        ]
    return clean


def content_blocks(content: Any) -> list[Block]:
    """A message's content as a block list (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def breakpoint_ttl(block: Block) -> str | None:
    """The TTL of a `cache_control` marker on the block (or hoisted from its last inner block)."""
    marker = block.get("cache_control")
    if not isinstance(marker, dict):
        inner = block.get("content")
        if block.get("type") == "tool_result" and isinstance(inner, list) and inner:
            last = inner[-1]
            marker = last.get("cache_control") if isinstance(last, dict) else None
    if not isinstance(marker, dict):
        return None
    return "1h" if marker.get("ttl") == "1h" else "5m"


def is_cacheable(block: Block) -> bool:
    """Whether the automatic breakpoint may land on this block (§4.2, §4.3)."""
    kind = block.get("type")
    if kind in THINKING_TYPES:
        return False
    return not (kind == "text" and not block.get("text"))


def has_image(block: Block) -> bool:
    if block.get("type") == "image":
        return True
    inner = block.get("content")
    return isinstance(inner, list) and any(isinstance(b, dict) and b.get("type") == "image" for b in inner)


def system_blocks(system: Any) -> list[Block]:
    if isinstance(system, str):
        return [{"type": "text", "text": system}] if system else []
    return content_blocks(system)


def text_of(block: Block) -> str:
    """The plain text a reader would see in a block (tool results flattened, images dropped)."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_result":
        inner = block.get("content")
        if isinstance(inner, str):
            return inner
        return "\n".join(text_of(b) for b in content_blocks(inner))
    if kind == "thinking":
        return str(block.get("thinking", ""))
    return ""
