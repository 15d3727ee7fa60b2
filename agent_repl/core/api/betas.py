"""The `anthropic-beta` header of a request, read from what the request carries.

The docs ask for a beta's header on every request that uses the feature, not only on the one
that first asked for it: a `compaction` block the API wrote is sent back first in `messages` on
every later request, and each of those needs the compaction beta too. So the header is decided
here, from the body alone, just before the request leaves (`ModelClient.stream`), and no caller
can send a feature without its header or forget one after a resume.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

ON_DEMAND_COMPACTION_BETA = "compact-2026-09-04"
THRESHOLD_COMPACTION_BETA = "compact-2026-01-12"
CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
# Our emulator's cache-editing beta (not part of the public API).
CACHE_EDITING_BETA = "cache-editing-agent-repl"
THINKING_BINDING_BETA = "thinking-binding-controls-2026-08-01"
CACHE_DIAGNOSIS_BETA = "cache-diagnosis-2026-04-07"
# `thinking.display: "updates"`: only the notes written between tool calls carry their text.
THINKING_DISPLAY_UPDATES_BETA = "thinking-display-updates-2026-08-18"

# The threshold compaction edit has its own beta; the clearing edits share context management's.
_EDIT_BETAS = {"compact_20260112": THRESHOLD_COMPACTION_BETA}


def request_betas(body: dict[str, Any]) -> list[str]:
    """Every beta `body` uses, in a stable order, each once; [] for a plain request."""
    found: list[str] = []

    def add(beta: str) -> None:
        if beta not in found:
            found.append(beta)

    if body.get("compaction") is not None:
        add(ON_DEMAND_COMPACTION_BETA)
    management = body.get("context_management")
    if isinstance(management, dict):
        for edit in management.get("edits") or []:
            kind = edit.get("type") if isinstance(edit, dict) else None
            add(_EDIT_BETAS.get(kind, CONTEXT_MANAGEMENT_BETA) if isinstance(kind, str) else CONTEXT_MANAGEMENT_BETA)
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("block_binding") is not None:
        add(THINKING_BINDING_BETA)
    if isinstance(thinking, dict) and thinking.get("display") == "updates":
        add(THINKING_DISPLAY_UPDATES_BETA)
    if body.get("diagnostics") is not None:
        add(CACHE_DIAGNOSIS_BETA)
    for block in _message_blocks(body.get("messages")):
        kind = block.get("type")
        if kind == "compaction" and THRESHOLD_COMPACTION_BETA not in found:
            add(ON_DEMAND_COMPACTION_BETA)
        elif kind == "cache_edits" or (kind == "tool_result" and "cache_reference" in block):
            add(CACHE_EDITING_BETA)
    return found


def _message_blocks(messages: Any) -> Iterator[dict[str, Any]]:
    if not isinstance(messages, list):
        return
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            yield from (block for block in content if isinstance(block, dict))
