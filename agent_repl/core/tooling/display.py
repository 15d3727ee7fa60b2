"""How a tool's calls are shown: each tool declares its display, so no front end switches on names.

A `ToolDisplay` answers from what a transcript keeps of a call (the tool's input and the structured
`toolUseResult` copy, in Claude Code's shapes), so a call looks the same while it runs, after a
resume, and in a session Claude Code wrote. It gives the headline (`Read(notes.md)`), the one-line
summary of a result ("Read 42 lines"), the text of the input, and the kind of body a front end
draws when the call is open. Front ends draw each `BodyKind` their own way; tools never import them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from agent_repl.core.model.visible import show_controls
from agent_repl.core.tooling.diffs import patch_stats, structured_patch

HEADLINE_WIDTH = 90
# The argument a default headline shows; the first key present wins.
MAIN_ARGUMENT_KEYS = ("command", "file_path", "notebook_path", "pattern", "path", "url", "query", "description")


class BodyKind(StrEnum):
    """What an open call shows; a front end draws each kind (diff colours, a checklist box...)."""

    # The input, then the result text.
    TEXT = "text"
    # A file change as a unified diff (`ToolDisplay.hunks`).
    DIFF = "diff"
    # A todo list (the input's `todos`, the result's `newTodos`).
    CHECKLIST = "checklist"
    # A plan in Markdown (the input's `plan`).
    PLAN = "plan"
    # A sub-agent's box: its instructions, its tool calls, its answer.
    SUBTASK = "subtask"
    # The API's web search: the pages found.
    SEARCH_RESULTS = "search_results"
    # The API's web fetch: the start of the page.
    PAGE = "page"


# Bodies that are the point of the call: shown open by default.
_OPEN_BODIES = frozenset({BodyKind.DIFF, BodyKind.CHECKLIST, BodyKind.PLAN})


def one_line(text: str, width: int = HEADLINE_WIDTH) -> str:
    """`text` on one line, control characters visible, cut to `width` with an ellipsis."""
    line = " ".join(show_controls(text, newlines=True, tabs=True).split())
    return line if len(line) <= width else line[: width - 1] + "…"


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def structured_dict(structured: Any) -> dict[str, Any]:
    return structured if isinstance(structured, dict) else {}


class ToolDisplay:
    """The default display, for any tool that declares none (MCP tools, another agent's tools):
    `Name(main argument)`, the result's first line, the input as JSON and the result as text."""

    body: BodyKind = BodyKind.TEXT

    @property
    def opens_expanded(self) -> bool:
        """Calls whose body is the point (a diff, a checklist, a plan) are shown open."""
        return self.body in _OPEN_BODIES

    def headline(self, name: str, tool_input: Mapping[str, Any], width: int = HEADLINE_WIDTH) -> str:
        """`Name(main argument)`, on one line."""
        main = next((tool_input[key] for key in MAIN_ARGUMENT_KEYS if isinstance(tool_input.get(key), str)), None)
        if main is None and tool_input:
            main = ", ".join(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in tool_input.items())
        return one_line(f"{name}({main or ''})", width)

    def summary(self, tool_input: Mapping[str, Any], structured: Any) -> str | None:
        """One line on a successful result; None: the front end shows the result's first line."""
        return None

    def input_text(self, tool_input: Mapping[str, Any], limit: int) -> str:
        """The input as an open call shows it, raw (the front end makes controls visible)."""
        return json.dumps(dict(tool_input), ensure_ascii=False, indent=1)[:limit]

    def hunks(self, tool_input: Mapping[str, Any], structured: Any) -> list[dict[str, Any]] | None:
        """A `DIFF` body's hunks: the change made (the result) or asked for (the input alone)."""
        return None


class FileChangeDisplay(ToolDisplay):
    """A call that changes one file (Edit, Write, Claude Code's MultiEdit): its diff, open."""

    body = BodyKind.DIFF

    def hunks(self, tool_input: Mapping[str, Any], structured: Any) -> list[dict[str, Any]] | None:
        if isinstance(structured, dict) and isinstance(structured.get("structuredPatch"), list):
            return [h for h in structured["structuredPatch"] if isinstance(h, dict)]
        return self.asked_hunks(tool_input)

    def asked_hunks(self, tool_input: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        """The change the input asks for, before there is a result."""
        return None

    def summary(self, tool_input: Mapping[str, Any], structured: Any) -> str | None:
        hunks = self.hunks(tool_input, structured)
        path = changed_path(tool_input, structured)
        return f"Updated {path}: {patch_stats(hunks).text()}" if hunks is not None else f"Updated {path}"


def changed_path(tool_input: Mapping[str, Any], structured: Any) -> str:
    """The changed file's path as a summary names it."""
    return one_line(str(structured_dict(structured).get("filePath") or tool_input.get("file_path") or ""), 70)


class MultiEditDisplay(FileChangeDisplay):
    """Claude Code's MultiEdit, met in a resumed Claude Code session: several replacements, one diff."""

    def asked_hunks(self, tool_input: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        edits = tool_input.get("edits")
        if not isinstance(edits, list):
            return None
        hunks: list[dict[str, Any]] = []
        for edit in edits:
            if isinstance(edit, dict) and isinstance(edit.get("old_string"), str):
                hunks += structured_patch(edit["old_string"], str(edit.get("new_string", "")))
        return hunks


class WebSearchDisplay(ToolDisplay):
    """The API's web_search server tool: the pages it found."""

    body = BodyKind.SEARCH_RESULTS


class WebFetchDisplay(ToolDisplay):
    """The API's web_fetch server tool: the start of the page."""

    body = BodyKind.PAGE


# Tools the agent does not run itself but whose calls a history may hold: the API's server tools,
# and Claude Code's MultiEdit in a resumed session.
FOREIGN_DISPLAYS: dict[str, ToolDisplay] = {
    "MultiEdit": MultiEditDisplay(),
    "WebSearch": WebSearchDisplay(),
    "WebFetch": WebFetchDisplay(),
}
DEFAULT_DISPLAY = ToolDisplay()


class ToolDisplays:
    """Each known tool's display by name; any other name (an MCP tool, an unknown one) gets the default."""

    def __init__(self, displays: Mapping[str, ToolDisplay] | None = None) -> None:
        self._by_name = {**FOREIGN_DISPLAYS, **(displays or {})}

    def of(self, name: str) -> ToolDisplay:
        return self._by_name.get(name, DEFAULT_DISPLAY)

    def names(self) -> frozenset[str]:
        return frozenset(self._by_name)
