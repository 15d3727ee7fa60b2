"""The short `[id:xxxxxx]` tags the model sees on user messages (docs/architecture.md 5.7).

Six base-36 characters derived from the message uuid: the same message gets the same tag in
every run and after every resume, so the bytes of the prompt never change because of them.
"""

from __future__ import annotations

import hashlib

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
ID_LENGTH = 6


def short_id(uuid: str) -> str:
    number = int.from_bytes(hashlib.sha256(uuid.encode()).digest()[:8], "big")
    chars = []
    for _ in range(ID_LENGTH):
        number, digit = divmod(number, 36)
        chars.append(_ALPHABET[digit])
    return "".join(chars)


def id_tag(uuid: str) -> str:
    return f"[id:{short_id(uuid)}]"
