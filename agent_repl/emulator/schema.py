"""What `POST /v1/messages` and `count_tokens` accept, field by field (§2, §2.1, §8).

The real API validates with pydantic models, so a bad field comes back as the dotted path and
pydantic's sentence; a tagged union (content blocks, cache_control, thinking, tool_choice) puts
its tag into the path (`messages.1.content.0.tool_use.id`, `system.0.cache_control.ephemeral.ttl`).
Only the first problem is reported, as the API does. Beta-only fields and blocks are extra
inputs unless the `anthropic-beta` header names their beta.
"""

from __future__ import annotations

from typing import Any

from agent_repl.emulator.errors import invalid_request
from agent_repl.emulator.fieldcheck import (
    AnyOf,
    Int,
    ListOf,
    Literal,
    Obj,
    Opt,
    Pattern,
    SchemaError,
    Tagged,
    check_object,
    fail,
)

CACHE_EDITING_BETA = "cache-editing-agent-repl"
CONTEXT_MANAGEMENT_BETAS = frozenset({"context-management-2025-06-27", "compact-2026-01-12"})
COMPACTION_BETAS = frozenset({"compact-2026-09-04", "compact-2026-01-12"})


def _variant(fields: dict[str, Any], required: tuple[str, ...] = (), **kw: Any) -> Obj:
    return Obj({"type": "str", **fields}, frozenset(("type", *required)), **kw)


CACHE_CONTROL = Tagged({"ephemeral": _variant({"ttl": Literal(("5m", "1h"))})})
TOOL_ID = Pattern("^[a-zA-Z0-9_-]+$")
_OPEN = Obj({"type": "str"}, frozenset({"type"}), open=True)
_CACHE_EDITING = frozenset({CACHE_EDITING_BETA})

TEXT_BLOCK = _variant({"text": "str", "cache_control": Opt(CACHE_CONTROL), "citations": "any"}, ("text",))
IMAGE_SOURCE = Tagged(
    {
        "base64": _variant(
            {"media_type": Literal(("image/jpeg", "image/png", "image/gif", "image/webp")), "data": "str"},
            ("media_type", "data"),
        ),
        "url": _variant({"url": "str"}, ("url",)),
        "file": _variant({"file_id": "str"}, ("file_id",)),
    }
)
IMAGE_BLOCK = _variant(
    {"source": IMAGE_SOURCE, "cache_control": Opt(CACHE_CONTROL), "transformations": "any"}, ("source",)
)
DOCUMENT_BLOCK = _variant(
    {
        "source": "dict",
        "cache_control": Opt(CACHE_CONTROL),
        "citations": "any",
        "context": Opt("str"),
        "title": Opt("str"),
    },
    ("source",),
)
TOOL_RESULT_INNER = Tagged(
    {
        "text": TEXT_BLOCK,
        "image": IMAGE_BLOCK,
        "document": DOCUMENT_BLOCK,
        "search_result": _OPEN,
        "tool_reference": _variant({"tool_name": "str", "cache_control": Opt(CACHE_CONTROL)}, ("tool_name",)),
        "browser_state": _OPEN,
    }
)
CACHE_EDIT = Tagged({"delete": _variant({"cache_reference": "str"}, ("cache_reference",))})

CONTENT_BLOCK = Tagged(
    {
        "text": TEXT_BLOCK,
        "image": IMAGE_BLOCK,
        "document": DOCUMENT_BLOCK,
        "search_result": _OPEN,
        "thinking": _variant({"thinking": "str", "signature": "str"}, ("thinking", "signature")),
        "redacted_thinking": _variant({"data": "str"}, ("data",)),
        "tool_use": _variant(
            {
                "id": TOOL_ID,
                "name": "str",
                "input": "dict",
                "cache_control": Opt(CACHE_CONTROL),
                "caller": "any",
                "toolset_name": Opt("str"),
            },
            ("id", "name", "input"),
        ),
        "tool_result": _variant(
            {
                "tool_use_id": TOOL_ID,
                "content": AnyOf(("str", ListOf(TOOL_RESULT_INNER))),
                "is_error": "bool",
                "cache_control": Opt(CACHE_CONTROL),
                "toolset_name": Opt("str"),
                "cache_reference": "str",
            },
            ("tool_use_id",),
            beta_fields={"cache_reference": _CACHE_EDITING},
        ),
        "cache_edits": _variant({"edits": ListOf(CACHE_EDIT)}, ("edits",)),
        **{
            name: _OPEN
            for name in (
                "server_tool_use",
                "web_search_tool_result",
                "web_fetch_tool_result",
                "code_execution_tool_result",
                "bash_code_execution_tool_result",
                "text_editor_code_execution_tool_result",
                "tool_search_tool_result",
                "container_upload",
                "compaction",
                "tool_addition",
                "tool_removal",
                "mcp_tool_use",
                "mcp_tool_result",
                "fallback",
            )
        },
    },
    # A compaction block is a beta input: the request that sends it back names a compaction beta.
    beta_variants={"cache_edits": _CACHE_EDITING, "compaction": COMPACTION_BETAS},
)

MESSAGE = Obj(
    {"role": Literal(("user", "assistant", "system")), "content": AnyOf(("str", ListOf(CONTENT_BLOCK)))},
    frozenset({"role", "content"}),
)
SYSTEM_BLOCK = Obj(
    {"type": Literal(("text",)), "text": "str", "cache_control": Opt(CACHE_CONTROL), "citations": "any"},
    frozenset({"type", "text"}),
)
# "updates" (only the notes between tool calls carry their text) is a beta display.
THINKING_DISPLAY_UPDATES_BETA = "thinking-display-updates-2026-08-18"
_DISPLAY = Literal(
    ("summarized", "omitted", "updates"), beta_values=(("updates", frozenset({THINKING_DISPLAY_UPDATES_BETA})),)
)
THINKING = Tagged(
    {
        "enabled": _variant({"budget_tokens": Int(ge=1024), "display": Opt(_DISPLAY)}, ("budget_tokens",)),
        "adaptive": _variant(
            {"display": Opt(_DISPLAY), "block_binding": "dict"},
            beta_fields={"block_binding": frozenset({"thinking-binding-controls-2026-08-01"})},
        ),
        "disabled": _variant({}),
        # The SDK's ThinkingConfigBetweenTools has `type` only: its notes always carry their text.
        "between_tools": _variant({}),
    }
)
_PARALLEL = {"disable_parallel_tool_use": "bool"}
TOOL_CHOICE = Tagged(
    {
        "auto": _variant(_PARALLEL),
        "any": _variant(_PARALLEL),
        "tool": _variant({"name": "str", **_PARALLEL}, ("name",)),
        "none": _variant({}),
    }
)
CUSTOM_TOOL = Obj(
    {
        "name": Pattern("^[a-zA-Z0-9_-]{1,64}$"),
        "description": "str",
        "input_schema": "dict",
        "cache_control": Opt(CACHE_CONTROL),
        "strict": "bool",
        "defer_loading": "bool",
        "eager_input_streaming": "bool",
        "input_examples": "any",
        "allowed_callers": "any",
        "type": "str",
    },
    frozenset({"name", "input_schema"}),
)


def check_tool(value: Any, betas: frozenset[str]) -> None:
    """A custom tool (no `type`, or `custom`) is checked field by field; server tools are open."""
    if not isinstance(value, dict):
        fail("Input should be a valid dictionary")
    if value.get("type", "custom") in ("custom", None):
        try:
            check_object(value, CUSTOM_TOOL, betas)
        except SchemaError as err:
            err.parts.insert(0, "custom")
            raise
    elif not isinstance(value.get("type"), str):
        fail("Input should be a valid string", "type")
    elif not isinstance(value.get("name"), str):
        fail("Field required", "name")


OUTPUT_CONFIG = Obj(
    {
        "effort": Opt(Literal(("low", "medium", "high", "xhigh", "max"))),
        "format": Opt("dict"),
        "task_budget": "any",
    }
)
_ANY_BETA: frozenset[str] = frozenset({"*"})
_BETA_BODY = {
    "context_management": CONTEXT_MANAGEMENT_BETAS,
    "compaction": frozenset({"compact-2026-09-04"}),
    "mcp_servers": _ANY_BETA,
    "fallbacks": _ANY_BETA,
    "fallback_credit_token": _ANY_BETA,
    "billing_policy": _ANY_BETA,
    "thread": _ANY_BETA,
}
_SHARED_FIELDS: dict[str, Any] = {
    "model": "str",
    "messages": ListOf(MESSAGE),
    "system": AnyOf(("str", ListOf(SYSTEM_BLOCK))),
    "tools": ListOf(check_tool),
    "tool_choice": TOOL_CHOICE,
    "thinking": THINKING,
    "output_config": OUTPUT_CONFIG,
    "cache_control": Opt(CACHE_CONTROL),
    "speed": Opt(Literal(("standard", "fast"))),
    "context_management": Opt("dict"),
    "compaction": Opt("dict"),
    "mcp_servers": Opt("any"),
}
CREATE_BODY = Obj(
    {
        **_SHARED_FIELDS,
        "max_tokens": Int(ge=0),
        "stop_sequences": ListOf("str"),
        "stream": "bool",
        "metadata": Obj({"user_id": Opt("str")}),
        "service_tier": Literal(("auto", "standard_only")),
        "inference_geo": Opt("str"),
        "diagnostics": Obj({"previous_message_id": Opt("str")}),
        "container": "any",
        "temperature": "number",
        "top_p": "number",
        "top_k": "int",
        "fallbacks": "any",
        "fallback_credit_token": "any",
        "billing_policy": "any",
        "thread": "any",
    },
    frozenset({"model", "messages", "max_tokens"}),
    beta_fields=_BETA_BODY,
)
COUNT_BODY = Obj(
    _SHARED_FIELDS,
    frozenset({"model", "messages"}),
    beta_fields={k: v for k, v in _BETA_BODY.items() if k in _SHARED_FIELDS},
)


def check_body(body: Any, schema: Obj, betas: set[str] | frozenset[str]) -> None:
    """Raise a 400 ApiError for the first field-level problem of `body`."""
    active = frozenset(betas) | (_ANY_BETA if betas else frozenset())
    if not isinstance(body, dict):
        raise invalid_request("Input should be a valid dictionary")
    try:
        check_object(body, schema, active)
    except SchemaError as err:
        raise invalid_request(err.text()) from None
