"""Making a summary request smaller in bytes after a 413 `request_too_large` (32 MB bodies).

A body that large is rarely many tokens: base64 images and huge tool results weigh it down. So
the request sheds bytes, not tokens: images and documents become `[image]` / `[document]`
markers, then the oldest API rounds go (what the user typed in them stays), then the largest
tool results become `<persisted-output>` previews (the full text saved beside the session).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_repl.core.persisted_output import is_persisted_preview, persist_text

# The documented maximum body of a Messages request.
REQUEST_SIZE_LIMIT_BYTES = 32 * 1024 * 1024
IMAGE_MARKER = "[image]"
DOCUMENT_MARKER = "[document]"


def wire_bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(str(b.get("text", "")) for b in content or [] if b.get("type") == "text")


def _lighter(block: dict[str, Any], tool_results_dir: Path) -> dict[str, Any]:
    """The block with its weight gone: media as markers, a large result as a saved preview."""
    kind = block.get("type")
    if kind == "image":
        return {"type": "text", "text": IMAGE_MARKER}
    if kind == "document":
        return {"type": "text", "text": DOCUMENT_MARKER}
    if kind != "tool_result":
        return block
    content = block.get("content")
    if isinstance(content, list) and any(b.get("type") in ("image", "document") for b in content):
        return {**block, "content": [_lighter(b, tool_results_dir) for b in content]}
    text = _result_text(block)
    if is_persisted_preview(text):
        return block
    saved = persist_text(text, str(block["tool_use_id"]), tool_results_dir)
    return {**block, "content": saved.preview}


def media_as_markers(wire: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every image and document in the user's messages (and their tool results) as a marker."""

    def lighter(block: dict[str, Any]) -> dict[str, Any]:
        kind = block.get("type")
        if kind in ("image", "document"):
            return {"type": "text", "text": IMAGE_MARKER if kind == "image" else DOCUMENT_MARKER}
        content = block.get("content")
        if kind == "tool_result" and isinstance(content, list):
            return {**block, "content": [lighter(b) for b in content]}
        return block

    return [
        {**m, "content": [lighter(b) for b in m["content"]]} if m["role"] == "user" else m for m in wire
    ]


def lighten_largest(wire: list[dict[str, Any]], target_bytes: int, tool_results_dir: Path) -> list[dict[str, Any]]:
    """Replace the heaviest user-side blocks until the wire weighs at most `target_bytes`."""
    messages = [{**m, "content": list(m["content"])} for m in wire]
    places = [
        (wire_bytes(block), i, j)
        for i, message in enumerate(messages)
        if message["role"] == "user"
        for j, block in enumerate(message["content"])
        if block.get("type") in ("tool_result", "image", "document")
    ]
    size = wire_bytes(messages)
    for weight, i, j in sorted(places, reverse=True):
        if size <= target_bytes:
            break
        lighter = _lighter(messages[i]["content"][j], tool_results_dir)
        size -= weight - wire_bytes(lighter)
        messages[i]["content"][j] = lighter
    return messages
