"""ToolSearch: the model loads the definitions of deferred tools by keyword or by name.

When many MCP tools are configured, their definitions are sent with `defer_loading` and stay out
of the model's context; this tool's description lists their names. Its result is one
`tool_reference` block per tool found, which the API expands into that tool's definition in
place (the public API's custom tool search), so the tool list on the wire never changes.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import Field

from agent_repl.core.api.deferred_tools import TOOL_SEARCH_NAME
from agent_repl.core.model.messages import ToolReferenceBlock
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, load_description
from agent_repl.tools._common import ToolArgs

SELECT_PREFIX = "select:"
_WORD = re.compile(r"[a-z0-9]+")
# How much a query word counts where it is found in a tool.
NAME_WEIGHT, PARAMETER_WEIGHT, DESCRIPTION_WEIGHT = 3, 2, 1


class ToolSearchArgs(ToolArgs):
    query: str = Field(
        min_length=1,
        description='Words for the capability you need, or "select:" and exact tool names separated by commas',
    )
    max_results: int = Field(default=5, ge=1, le=20, description="How many tools a word search loads at most")


def _word(word: str) -> str:
    if word.isdigit():
        return str(int(word))
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _words(text: str) -> set[str]:
    """Lowercase words, a plural's final s dropped and a number's leading zeros ("7" finds `record_07`)."""
    return {_word(w) for w in _WORD.findall(text.lower())}


def _parameter_text(schema: dict[str, Any]) -> str:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return ""
    parts = [f"{name} {spec.get('description', '') if isinstance(spec, dict) else ''}" for name, spec in properties.items()]
    return " ".join(parts)


class ToolSearch(Tool[ToolSearchArgs]):
    name = TOOL_SEARCH_NAME
    args_model = ToolSearchArgs
    # It reads only its own catalog.
    is_read_only: ClassVar[bool] = True

    def __init__(self, deferred: list[Tool]) -> None:
        self.catalog = {tool.name: tool for tool in sorted(deferred, key=lambda t: t.name)}
        names = "\n".join(self.catalog)
        self.description = f"{load_description(__file__, 'tool_search')}\n\nDeferred tools:\n{names}"
        self._index = {
            name: (
                _words(name.replace("_", " ")),
                _words(_parameter_text(tool.api_schema().get("input_schema", {}))),
                _words(tool.api_schema().get("description", "")),
            )
            for name, tool in self.catalog.items()
        }

    def search(self, query: str, limit: int) -> list[str]:
        """The best `limit` deferred tools for `query`, best first; exact names for `select:`."""
        if query.strip().lower().startswith(SELECT_PREFIX):
            wanted = [part.strip() for part in query.strip()[len(SELECT_PREFIX) :].split(",") if part.strip()]
            return [name for name in dict.fromkeys(wanted) if name in self.catalog]
        words = _words(query)
        scored = []
        for name, (in_name, in_parameters, in_description) in self._index.items():
            score = sum(
                NAME_WEIGHT * (w in in_name) + PARAMETER_WEIGHT * (w in in_parameters) + DESCRIPTION_WEIGHT * (w in in_description)
                for w in words
            )
            if score:
                scored.append((-score, name))
        return [name for _, name in sorted(scored)[:limit]]

    async def run(self, args: ToolSearchArgs, ctx: ToolContext) -> ToolOutput:
        found = self.search(args.query, args.max_results)
        if not found:
            return ToolOutput(
                content=f"No deferred tool matches {args.query!r}. Try other words, or select: with names from the "
                "list in this tool's description.",
                summary=f"no tool matches {args.query!r}",
            )
        return ToolOutput(
            content=[ToolReferenceBlock(tool_name=name) for name in found],
            structured={"query": args.query, "matches": found, "total_deferred_tools": len(self.catalog)},
            summary="loaded " + ", ".join(found),
        )
