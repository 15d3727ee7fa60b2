"""Deferred tools: definitions the API keeps out of the model's context until ToolSearch loads them.

When the MCP tools' definitions would take more than a share of the context window, they go out
with `defer_loading: true` and the model loads the ones it needs through ToolSearch, whose
`tool_reference` results the API expands in place. A compaction summary loses those results, so
the compact boundary records the tools discovered before it (`preCompactDiscoveredTools`), and
after it they are sent loaded. The tool list therefore changes at a compaction and never between.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from agent_repl.core.model.messages import Message, SystemMessage, ToolReferenceBlock, UserMessage

TOOL_SEARCH_NAME = "ToolSearch"
DISCOVERED_KEY = "preCompactDiscoveredTools"

ToolSearchMode = Literal["auto", "always", "never"]


def should_defer(mode: ToolSearchMode, definition_tokens: int, context_window: int, share: float) -> bool:
    """Whether the MCP tools' definitions (`definition_tokens`) go out deferred."""
    if definition_tokens <= 0 or mode == "never":
        return False
    return mode == "always" or definition_tokens > share * context_window


def boundary_loaded_tools(view: Iterable[Message]) -> frozenset[str]:
    """The tools the view's compact boundary says were discovered before it."""
    for message in view:
        if isinstance(message, SystemMessage) and message.subtype == "compact_boundary":
            names = message.metadata.get(DISCOVERED_KEY) or []
            return frozenset(n for n in names if isinstance(n, str))
    return frozenset()


def referenced_tools(view: Iterable[Message]) -> set[str]:
    """Every tool a tool_reference in the view's tool results names."""
    names: set[str] = set()
    for message in view:
        if not isinstance(message, UserMessage) or isinstance(message.content, str):
            continue
        for result in message.tool_results():
            if not isinstance(result.content, str):
                names.update(b.tool_name for b in result.content if isinstance(b, ToolReferenceBlock))
    return names


def discovered_tools(view: list[Message]) -> list[str]:
    """What a compact boundary records: the tools loaded in this view, by the last boundary or by search."""
    return sorted(boundary_loaded_tools(view) | referenced_tools(view))
