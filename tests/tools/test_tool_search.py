"""ToolSearch: deferred tools found by words or by name, answered with tool_reference blocks."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agent_repl.core.api.request import build_request, tool_definitions
from agent_repl.core.model.messages import ToolReferenceBlock
from agent_repl.core.tooling.tool import Tool
from agent_repl.tools.tool_search import ToolSearch, ToolSearchArgs


class Fake(Tool[BaseModel]):
    args_model = BaseModel

    def __init__(self, name: str, description: str, properties: dict[str, Any] | None = None) -> None:
        self.name = name  # type: ignore[misc]
        self.description = description  # type: ignore[misc]
        self.properties = properties or {}

    def api_schema(self) -> dict[str, Any]:
        schema = {"type": "object", "properties": self.properties}
        return {"name": self.name, "description": self.description, "input_schema": schema}


CATALOG = [
    Fake("mcp__github__create_issue", "Open a new issue in a repository."),
    Fake("mcp__github__list_issues", "List the issues of a repository.", {"state": {"description": "open or closed"}}),
    Fake("mcp__slack__send_message", "Post a message to a channel.", {"channel": {}, "text": {}}),
    Fake("mcp__ledger__record_07", "Look up a record."),
]


def test_words_rank_by_name_then_parameters_then_description():
    search = ToolSearch(CATALOG)
    assert search.search("create issue", 5) == ["mcp__github__create_issue", "mcp__github__list_issues"]
    assert search.search("slack channel", 5) == ["mcp__slack__send_message"]
    assert search.search("closed", 5) == ["mcp__github__list_issues"]
    assert search.search("record 7", 5) == ["mcp__ledger__record_07"]
    assert search.search("issue", 1) == ["mcp__github__create_issue"]
    assert search.search("weather", 5) == []


def test_select_loads_exact_names_in_the_order_given_and_skips_unknown_ones():
    search = ToolSearch(CATALOG)
    wanted = "select: mcp__slack__send_message, nope, mcp__github__create_issue,mcp__slack__send_message"
    assert search.search(wanted, 5) == ["mcp__slack__send_message", "mcp__github__create_issue"]


async def test_the_result_is_tool_references_only_and_the_description_lists_the_names(ctx):
    search = ToolSearch(CATALOG)
    assert search.description.endswith("Deferred tools:\n" + "\n".join(sorted(t.name for t in CATALOG)))
    found = await search.run(ToolSearchArgs(query="github issue"), ctx)
    assert found.content == [
        ToolReferenceBlock(tool_name="mcp__github__create_issue"),
        ToolReferenceBlock(tool_name="mcp__github__list_issues"),
    ]
    assert not found.is_error and found.summary == "loaded mcp__github__create_issue, mcp__github__list_issues"
    missing = await search.run(ToolSearchArgs(query="weather"), ctx)
    assert isinstance(missing.content, str) and missing.content.startswith("No deferred tool matches 'weather'")


def test_deferred_definitions_carry_defer_loading_and_the_breakpoint_skips_them():
    tools = [*CATALOG, ToolSearch(CATALOG)]
    definitions = tool_definitions(tools, frozenset(t.name for t in CATALOG))
    assert [d["name"] for d in definitions] == ["ToolSearch", *sorted(t.name for t in CATALOG)]
    assert [d.get("defer_loading", False) for d in definitions] == [False, True, True, True, True]
    body = build_request(model="m", max_tokens=10, system="s", tools=definitions, messages=[])
    assert [t["name"] for t in body["tools"] if "cache_control" in t] == ["ToolSearch"]
    assert "cache_control" not in definitions[0]
