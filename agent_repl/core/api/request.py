"""Building the request body, with cache breakpoints placed so each request reads the last one's
prefix (docs/architecture.md 6.1).

Breakpoints: the last tool definition the model reads (deferred ones stay out of the prompt),
the system prompt, and the last block of each of the last two user messages. The second-to-last user message is where the previous request ended
and wrote its cache entry, so the read lands exactly there however many blocks the last turn
added (the API's lookback is only 20 blocks). Tools are sorted by name so their bytes never
move. Nothing here mutates its inputs: marked blocks are copies.

`CacheMarks` lets the pipeline ask for the 1-hour lifetime: every breakpoint up to a wire index
(the tools and the system prompt with them, since a 1-hour breakpoint may not follow a 5-minute
one), and one more breakpoint at an anchor message (the tools' own then goes: the system
prompt's covers them, and a request holds at most four).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_repl.core.tooling.tool import Tool

EPHEMERAL = {"type": "ephemeral"}
HOUR = {"type": "ephemeral", "ttl": "1h"}
MESSAGE_BREAKPOINTS = 2


@dataclass(frozen=True)
class CacheMarks:
    """1-hour breakpoints up to wire message `hour_until` (None: none); an extra breakpoint at `anchor`."""

    hour_until: int | None = None
    anchor: int | None = None


# The API's own web tools (run by the server, not by us); declared unless settings turn them off.
WEB_SERVER_TOOLS: tuple[dict[str, Any], ...] = (
    {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 5},
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
)


def tool_definitions(
    tools: list[Tool], deferred: frozenset[str] = frozenset(), *, web: bool = False
) -> list[dict[str, Any]]:
    """The sorted tool list; tools named in `deferred` carry `defer_loading` (loaded by ToolSearch);
    with `web`, the API's web server tools follow (sorted too), so the bytes stay the same."""
    definitions = []
    for tool in sorted(tools, key=lambda t: t.name):
        schema = tool.api_schema()
        definitions.append({**schema, "defer_loading": True} if tool.name in deferred else schema)
    return definitions + [dict(t) for t in WEB_SERVER_TOOLS] if web else definitions


def _with_breakpoint(block: dict[str, Any], hour: bool = False) -> dict[str, Any]:
    return {**block, "cache_control": dict(HOUR if hour else EPHEMERAL)}


def _cacheable(block: dict[str, Any]) -> bool:
    if block.get("type") in ("thinking", "redacted_thinking", "cache_edits"):
        return False
    return not (block.get("type") == "text" and not block.get("text"))


def _mark(marked: list[dict[str, Any]], index: int, hour: bool) -> bool:
    """Put a breakpoint on the last cacheable block of message `index`; whether there was one."""
    message = marked[index]
    content = list(message["content"])
    for position in range(len(content) - 1, -1, -1):
        if _cacheable(content[position]):
            if "cache_control" not in content[position]:
                content[position] = _with_breakpoint(content[position], hour)
                marked[index] = {**message, "content": content}
            return True
    return False


def place_message_breakpoints(
    wire: list[dict[str, Any]], count: int = MESSAGE_BREAKPOINTS, marks: CacheMarks | None = None
) -> list[dict[str, Any]]:
    """A copy of `wire` with a breakpoint on the last cacheable block of the last `count` user
    messages (and of the anchor `marks` names), 1-hour ones up to `marks.hour_until`."""
    marks = marks or CacheMarks()
    marked = list(wire)

    def hour(index: int) -> bool:
        return marks.hour_until is not None and index <= marks.hour_until

    placed = 0
    for index in range(len(marked) - 1, -1, -1):
        if placed == count:
            break
        if marked[index]["role"] == "user" and _mark(marked, index, hour(index)):
            placed += 1
    if marks.anchor is not None and 0 <= marks.anchor < len(marked) and marked[marks.anchor]["role"] == "user":
        _mark(marked, marks.anchor, hour(marks.anchor))
    return marked


def build_request(
    *,
    model: str,
    max_tokens: int,
    system: str,
    tools: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    extra: dict[str, Any] | None = None,
    cache: CacheMarks | None = None,
) -> dict[str, Any]:
    cache = cache or CacheMarks()
    hour = cache.hour_until is not None
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens}
    body["system"] = [_with_breakpoint({"type": "text", "text": system}, hour)]
    if tools:
        loaded = [i for i, tool in enumerate(tools) if not tool.get("defer_loading")]
        marked = (loaded[-1] if loaded else len(tools) - 1) if cache.anchor is None else -1
        body["tools"] = [_with_breakpoint(tool, hour) if i == marked else tool for i, tool in enumerate(tools)]
    body["messages"] = place_message_breakpoints(messages, marks=cache)
    if extra:
        body.update(extra)
    return body
