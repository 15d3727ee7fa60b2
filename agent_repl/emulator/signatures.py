"""Deterministic thinking and compaction signatures.

A thinking signature is a MAC over the model id, the block's token count, a digest of its text
and the prefix it was produced after (digests of `system`, of the non-deferred `tools`, and of
every message block before it). So the server can tell which model made a block, bill an
omitted-display block (sent back with empty text) for its real size, and check that nothing
before the block changed (preserved thinking). A compaction signature binds the summary to the
conversation state it replaced, so thinking in the turns kept after it stays checkable.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass

_KEY = b"agent-repl emulator thinking signature v2"
_PREFIX = "EmuSig2"
_COMPACTION_PREFIX = "EmuCmp1"
_MAC_BYTES = 24
CONTENT_BYTES = 8
HEAD_BYTES = 4
PREFIX_BYTES = 16
_BODY_BYTES = 4 + CONTENT_BYTES + HEAD_BYTES + HEAD_BYTES + PREFIX_BYTES


@dataclass(frozen=True)
class Binding:
    """What a thinking block was produced after: digests of system, tools and the message prefix."""

    system: bytes
    tools: bytes
    prefix: bytes


@dataclass(frozen=True)
class SignedThinking:
    tokens: int
    content: bytes
    binding: Binding
    mac: bytes
    body: bytes

    def made_by(self, model_id: str) -> bool:
        return hmac.compare_digest(self.mac, _mac(model_id, self.body))

    def model_among(self, model_ids: Iterable[str]) -> str | None:
        return next((model for model in model_ids if self.made_by(model)), None)


def content_digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()[:CONTENT_BYTES]


def _mac(model_id: str, body: bytes) -> bytes:
    return hmac.new(_KEY, model_id.encode() + b"\n" + body, hashlib.sha256).digest()[:_MAC_BYTES]


def thinking_signature(model_id: str, thinking: str, tokens: int, binding: Binding | None = None) -> str:
    bound = binding or Binding(bytes(HEAD_BYTES), bytes(HEAD_BYTES), bytes(PREFIX_BYTES))
    body = (
        max(0, tokens).to_bytes(4, "big")
        + content_digest(thinking)
        + bound.system[:HEAD_BYTES]
        + bound.tools[:HEAD_BYTES]
        + bound.prefix[:PREFIX_BYTES]
    )
    return _PREFIX + base64.b64encode(body + _mac(model_id, body)).decode("ascii")


def _decode(signature: str, prefix: str, size: int) -> bytes | None:
    if not signature.startswith(prefix):
        return None
    try:
        payload = base64.b64decode(signature[len(prefix) :], validate=True)
    except (binascii.Error, ValueError):
        return None
    return payload if len(payload) == size else None


def read_thinking_signature(signature: str) -> SignedThinking | None:
    """The parts of a signature this emulator made, or None for anything else."""
    payload = _decode(signature, _PREFIX, _BODY_BYTES + _MAC_BYTES)
    if payload is None:
        return None
    body, mac = payload[:_BODY_BYTES], payload[_BODY_BYTES:]
    at = 4 + CONTENT_BYTES
    binding = Binding(
        payload[at : at + HEAD_BYTES],
        payload[at + HEAD_BYTES : at + 2 * HEAD_BYTES],
        payload[at + 2 * HEAD_BYTES : _BODY_BYTES],
    )
    return SignedThinking(int.from_bytes(body[:4], "big"), body[4:at], binding, mac, body)


def signature_tokens(signature: str) -> int | None:
    """The token count a signature carries, or None for a signature we did not make."""
    signed = read_thinking_signature(signature)
    return None if signed is None else signed.tokens


def signature_matches(model_id: str, thinking: str, signature: str) -> bool:
    """Whether `signature` was made by this emulator for this model and this exact text."""
    signed = read_thinking_signature(signature)
    return signed is not None and signed.made_by(model_id) and signed.content == content_digest(thinking)


@dataclass(frozen=True)
class SignedCompaction:
    # The prefix chain state after the messages the summary replaced.
    chain: bytes
    content: bytes
    # Whether the compaction ran on a model with preserved thinking (kept thinking stays valid).
    preserved: bool


def compaction_signature(model_id: str, content: str, chain: bytes, *, preserved: bool) -> str:
    body = chain[:32].ljust(32, b"\0") + content_digest(content) + (b"\1" if preserved else b"\0")
    return _COMPACTION_PREFIX + base64.b64encode(body + _mac(model_id, body)).decode("ascii")


def read_compaction_signature(signature: str, content: str, model_ids: Iterable[str]) -> SignedCompaction | None:
    """The compaction's binding when some model of `model_ids` signed exactly this content."""
    payload = _decode(signature, _COMPACTION_PREFIX, 32 + CONTENT_BYTES + 1 + _MAC_BYTES)
    if payload is None:
        return None
    body, mac = payload[: -_MAC_BYTES], payload[-_MAC_BYTES:]
    if not any(hmac.compare_digest(mac, _mac(model, body)) for model in model_ids):
        return None
    if body[32 : 32 + CONTENT_BYTES] != content_digest(content):
        return None
    return SignedCompaction(body[:32], body[32 : 32 + CONTENT_BYTES], body[-1:] == b"\1")
