"""Deferred tools and `tool_reference` blocks, as the public API documents tool search.

A tool with `defer_loading: true` is not part of the prompt: it costs no tokens and is not in the
cached prefix. A `tool_reference` block in a tool_result (what a client-side tool search returns)
loads the named tool's definition at that position: the model reads, and is billed for, the
definition there, and the prefix hash covers it. The error texts below are ours [INF]: the docs
say such requests fail, not in which words.
"""

from __future__ import annotations

from typing import Any

from agent_repl.emulator.blocks import Block, strip_bookkeeping
from agent_repl.emulator.errors import invalid_request


def is_deferred(tool: Any) -> bool:
    return isinstance(tool, dict) and tool.get("defer_loading") is True


def tool_catalog(body: dict[str, Any]) -> dict[str, Block]:
    """Each tool's definition by name, as a reference loads it (without bookkeeping fields)."""
    catalog: dict[str, Block] = {}
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            catalog[tool["name"]] = {k: v for k, v in strip_bookkeeping(tool).items() if k != "defer_loading"}
    return catalog


def expand_references(block: Block, catalog: dict[str, Block]) -> Block:
    """A tool_result whose tool_reference blocks carry the definitions they load (same object if none)."""
    inner = block.get("content")
    if block.get("type") != "tool_result" or not isinstance(inner, list):
        return block
    if not any(isinstance(b, dict) and b.get("type") == "tool_reference" for b in inner):
        return block
    expanded = [
        {**b, "definition": catalog.get(str(b.get("tool_name")), {})}
        if isinstance(b, dict) and b.get("type") == "tool_reference"
        else b
        for b in inner
    ]
    return {**block, "content": expanded}


def check_deferred_tools(body: dict[str, Any]) -> None:
    """At least one tool is loaded, and every tool_reference names a tool of the request."""
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    if tools and all(is_deferred(t) for t in tools):
        raise invalid_request("tools: at least one tool must not set defer_loading")
    names = {t.get("name") for t in tools}
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            inner = block.get("content") if isinstance(block, dict) and block.get("type") == "tool_result" else None
            for k, sub in enumerate(inner if isinstance(inner, list) else []):
                if isinstance(sub, dict) and sub.get("type") == "tool_reference" and sub.get("tool_name") not in names:
                    raise invalid_request(
                        f"messages.{i}.content.{j}.content.{k}: tool_reference names {sub.get('tool_name')!r}, "
                        "which is not a tool of this request"
                    )
