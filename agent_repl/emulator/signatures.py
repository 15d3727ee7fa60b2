"""Deterministic thinking signatures.

A signature is a MAC over (model id, thinking text) plus the block's token count, so a block
whose text the client got back empty (`display: "omitted"`) is still billed for its size when
it is sent back, and the server can tell an edited or foreign block from a genuine one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

_KEY = b"agent-repl emulator thinking signature v1"
_PREFIX = "EmuSig1"
_MAC_BYTES = 24


def _mac(model_id: str, thinking: str) -> bytes:
    message = f"{model_id}\n{thinking}".encode()
    return hmac.new(_KEY, message, hashlib.sha256).digest()[:_MAC_BYTES]


def thinking_signature(model_id: str, thinking: str, tokens: int) -> str:
    payload = max(0, tokens).to_bytes(4, "big") + _mac(model_id, thinking)
    return _PREFIX + base64.b64encode(payload).decode("ascii")


def _decode(signature: str) -> bytes | None:
    if not signature.startswith(_PREFIX):
        return None
    try:
        payload = base64.b64decode(signature[len(_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        return None
    return payload if len(payload) == 4 + _MAC_BYTES else None


def signature_tokens(signature: str) -> int | None:
    """The token count a signature carries, or None for a signature we did not make."""
    payload = _decode(signature)
    return None if payload is None else int.from_bytes(payload[:4], "big")


def signature_matches(model_id: str, thinking: str, signature: str) -> bool:
    """Whether `signature` was made by this emulator for this model and this exact text."""
    payload = _decode(signature)
    return payload is not None and hmac.compare_digest(payload[4:], _mac(model_id, thinking))
