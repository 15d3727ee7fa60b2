"""`GET /v1/models` bodies: ModelInfo objects (§9) and the paginated list.

Capabilities describe what this emulator does, not what the real model does: server tools,
batches, citations and structured outputs are not emulated, so they say `supported: false`.
On-demand compaction is `capabilities.compaction.summarize`. Our own cache-editing beta
(`anthropic-beta: cache-editing-agent-repl`) is not part of the public API: only a server
started with it on advertises `capabilities.context_management.cache_edits_agent_repl`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_repl.emulator.errors import invalid_request

# Enabled per request by the `cache-editing-agent-repl` beta header (schema.CACHE_EDITING_BETA).
CACHE_EDITS_CAPABILITY = "cache_edits_agent_repl"
_EFFORT_LEVELS = ("low", "medium", "high", "max", "xhigh")
_THINKING_TYPES = ("adaptive", "between_tools", "disabled", "enabled")


def _flag(value: bool) -> dict[str, bool]:
    return {"supported": bool(value)}


def capabilities(spec: Any, *, cache_editing: bool = False) -> dict[str, Any]:
    thinking_types = frozenset(getattr(spec, "thinking_types", ()))
    adaptive = "adaptive" in thinking_types
    thinks = bool(thinking_types - {"disabled"})
    context_management: dict[str, Any] = {
        "supported": True,
        "clear_thinking_20251015": _flag(thinks),
        "clear_tool_uses_20250919": _flag(True),
        "compact_20260112": _flag(False),
    }
    if cache_editing:
        context_management[CACHE_EDITS_CAPABILITY] = _flag(True)
    compaction = bool(getattr(spec, "on_demand_compaction", False))
    return {
        "batch": _flag(False),
        "citations": _flag(False),
        "code_execution": _flag(False),
        "compaction": {"supported": compaction, "summarize": _flag(compaction)},
        "context_management": context_management,
        "effort": {"supported": adaptive, **{level: _flag(adaptive) for level in _EFFORT_LEVELS}},
        "image_input": _flag(True),
        "pdf_input": _flag(True),
        "server_tools": {"supported": False, "code_execution": _flag(False), "web_search": _flag(False)},
        "structured_outputs": _flag(False),
        "thinking": {
            "supported": thinks,
            "types": {kind: _flag(kind in thinking_types) for kind in _THINKING_TYPES},
        },
    }


def model_info(spec: Any, engine: Any) -> dict[str, Any]:
    return {
        "type": "model",
        "id": spec.id,
        "display_name": spec.display_name,
        "created_at": spec.created_at,
        "lifecycle": "active",
        "line": getattr(spec, "line", None),
        "deprecated_at": None,
        "retires_at": None,
        "max_input_tokens": engine.window_for(spec),
        "max_tokens": spec.max_output_tokens,
        "capabilities": capabilities(spec, cache_editing=bool(getattr(engine, "cache_editing", False))),
    }


def _unique(models: Mapping[str, Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for spec in models.values():
        seen.setdefault(spec.id, spec)
    return list(seen.values())


def models_page(models: Mapping[str, Any], engine: Any, query: Mapping[str, str]) -> dict[str, Any]:
    """One page of the model list; `after_id` / `before_id` / `limit` as the API paginates."""
    raw_limit = query.get("limit", "20")
    if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= 1000:
        raise invalid_request(
            "limit: Input should be greater than or equal to 1 and less than or equal to 1000"
        )
    limit = int(raw_limit)
    specs = _unique(models)
    ids = [spec.id for spec in specs]
    start, end = 0, len(specs)
    if query.get("after_id") in ids:
        start = ids.index(query["after_id"]) + 1
    if query.get("before_id") in ids:
        end = ids.index(query["before_id"])
    window = specs[start:end]
    if "before_id" in query and "after_id" not in query:
        page, has_more = window[-limit:], len(window) > limit
    else:
        page, has_more = window[:limit], len(window) > limit
    data = [model_info(spec, engine) for spec in page]
    return {
        "data": data,
        "has_more": has_more,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
    }
