"""When MCP tools go out deferred, and which tools a compact boundary records."""

from __future__ import annotations

from agent_repl.core.api.deferred_tools import (
    DISCOVERED_KEY,
    boundary_loaded_tools,
    discovered_tools,
    should_defer,
)
from agent_repl.core.model.messages import SystemMessage, ToolReferenceBlock, ToolResultBlock, UserMessage


def test_auto_defers_past_the_share_of_the_window_and_the_modes_override_it():
    assert not should_defer("auto", 10_000, 200_000, 0.10)
    assert should_defer("auto", 20_001, 200_000, 0.10)
    assert should_defer("always", 1, 200_000, 0.10)
    assert not should_defer("never", 1_000_000, 200_000, 0.10)
    assert not should_defer("always", 0, 200_000, 0.10)


def test_the_boundary_records_what_the_last_one_loaded_and_what_search_found_since():
    boundary = SystemMessage(subtype="compact_boundary", metadata={DISCOVERED_KEY: ["mcp__a__x"]})
    found = UserMessage(
        content=[ToolResultBlock(tool_use_id="t", content=[ToolReferenceBlock(tool_name="mcp__b__y")])]
    )
    view = [boundary, UserMessage(content="summary", is_compact_summary=True), found]
    assert boundary_loaded_tools(view) == frozenset({"mcp__a__x"})
    assert discovered_tools(view) == ["mcp__a__x", "mcp__b__y"]
    assert discovered_tools([found]) == ["mcp__b__y"] and boundary_loaded_tools([found]) == frozenset()
