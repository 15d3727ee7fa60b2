"""The structure of print-mode output as field paths, values left out: what the parity test
compares between agent-repl's lines and those recorded from Claude Code.

A line's kind is its `type` (with the `subtype` for system and result lines, the event's type for a
stream event). A path joins keys with "."; a list's items are "[]", content blocks "[<block type>]";
maps keyed by data (models, tool inputs) stop at "*", so no model name or input reaches a fixture.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# Maps whose keys are data, not field names: their entries are one "*" each.
KEYED_BY_DATA = {"modelUsage", "model_usage_since_last_result", "input", "tool_input", "context_management"}


def line_kind(line: dict[str, Any]) -> str:
    kind = str(line.get("type"))
    if kind in ("system", "result"):
        return f"{kind}/{line.get('subtype')}"
    if kind == "stream_event":
        return f"stream_event/{line.get('event', {}).get('type')}"
    return kind


def _walk(value: Any, path: str, out: set[str]) -> None:
    if path:
        out.add(path)
    if isinstance(value, dict):
        last = path.rsplit(".", 1)[-1].split("[", 1)[0]
        if last in KEYED_BY_DATA and path:
            if value:
                out.add(f"{path}.*")
            return
        for key, item in value.items():
            _walk(item, f"{path}.{key}" if path else key, out)
    elif isinstance(value, list):
        for item in value:
            block = item.get("type") if isinstance(item, dict) and path.endswith("content") else None
            _walk(item, f"{path}[{block}]" if isinstance(block, str) else f"{path}[]", out)


def field_paths(lines: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    """Kind -> the sorted field paths seen on lines of that kind."""
    kinds: dict[str, set[str]] = {}
    for line in lines:
        _walk(line, "", kinds.setdefault(line_kind(line), set()))
    return {kind: sorted(paths) for kind, paths in sorted(kinds.items())}


# The scripted run both sides make: one Bash call, then the answer.
STEPS: list[dict[str, Any]] = [
    {"text": "Listing.", "tools": [{"name": "Bash", "input": {"command": "echo hi", "description": "say hi"}}]},
    {"text": "Done."},
]
# The outputs compared, by name: the flags after `-p PROMPT`.
FORMATS: dict[str, list[str]] = {
    "json": ["--output-format", "json"],
    "stream-json": ["--output-format", "stream-json", "--verbose"],
    "stream-json-partial": ["--output-format", "stream-json", "--verbose", "--include-partial-messages"],
}
