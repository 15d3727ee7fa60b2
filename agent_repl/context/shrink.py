"""Making a summary request smaller when it is refused: too many tokens, or too many bytes.

Too long (`prompt is too long`): whole API rounds go from the front until the gap is
covered (20% of them when it is not known); what the user typed in them stays.

Too large (a 413 `request_too_large`, 32 MB bodies): a body that large is rarely many tokens:
base64 images and huge tool results weigh it down. So the request sheds bytes: images and
documents become `[image]` / `[document]` markers, then the oldest API rounds go, then the
largest tool results become `<persisted-output>` previews (the full text saved beside the session).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agent_repl.core.tooling.persisted_output import is_persisted_preview, persist_text

_PROMPT_TOO_LONG = re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum")
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


class CompactionError(Exception):
    pass


def prompt_too_long_gap(error: BaseException) -> int | None:
    match = _PROMPT_TOO_LONG.search(str(getattr(error, "message", "") or error))
    return int(match.group(1)) - int(match.group(2)) if match else None


def drop_oldest_rounds(
    wire: list[dict[str, Any]], gap: int | None, estimate: Any, *, carry_user_text: bool = True
) -> list[dict[str, Any]]:
    """Drop whole API rounds from the front until `gap` tokens are gone (20% of them when unknown).

    `carry_user_text`: keep the dropped rounds' user text (typed messages, earlier summaries)."""
    rounds: list[list[dict[str, Any]]] = []
    for message in wire:
        if message["role"] == "user" or not rounds:
            rounds.append([message])
        else:
            rounds[-1].append(message)
    if len(rounds) < 2:
        raise CompactionError("the conversation is too long to summarize and cannot be shortened further")
    if gap is None:
        drop = max(1, len(rounds) // 5)
    else:
        drop, freed = 0, 0
        while drop < len(rounds) - 1 and freed < gap:
            freed += sum(estimate(m) for m in rounds[drop])
            drop += 1
    kept = [m for group in rounds[drop:] for m in group]
    # What the user typed in the dropped rounds, and an earlier compaction's summary (the only
    # record of every user message before it), stay: they are small and must not be forgotten.
    carried = [
        b
        for group in (rounds[:drop] if carry_user_text else [])
        for m in group
        if m["role"] == "user"
        for b in m["content"]
        if b.get("type") == "text" and not str(b.get("text", "")).lstrip().startswith("<system-reminder>")
    ]
    # The first kept message may answer a tool call that was dropped: keep its other content only.
    first = kept[0]
    content = carried + [b for b in first["content"] if b.get("type") != "tool_result"]
    if len(content) == len(carried):
        content.append({"type": "text", "text": "[Earlier conversation omitted from this summary request]"})
    return [{**first, "content": content}, *kept[1:]]


def shrink_by_bytes(
    wire: list[dict[str, Any]], tool_results_dir: Path, target: int | None = None
) -> list[dict[str, Any]]:
    """After a 413: at most `target` bytes (by default half, and under the documented limit).
    Images and documents become markers first (a summary needs their place, not their pixels),
    then the oldest rounds go, then the heaviest results become saved previews."""
    target = min(REQUEST_SIZE_LIMIT_BYTES * 9 // 10, target or wire_bytes(wire) // 2)
    wire = media_as_markers(wire)
    if wire_bytes(wire) > target:
        try:
            wire = drop_oldest_rounds(wire, wire_bytes(wire) - target, wire_bytes)
        except CompactionError:
            pass  # one round is left: its heavy results go next
    return lighten_largest(wire, target, tool_results_dir)
