"""Levers: agent-repl with one thing changed, to show what its difference from Claude Code is made of.

Not product settings. Each changes the session `open_session` built:

- `compact numbering`: Read's output numbered as Claude Code 2.1.3xx numbers it (the line number
  and a tab) instead of ours (the number right-aligned in six columns and an arrow); the tool
  runs as usual and the benchmark rewrites the numbering of what it returns.
- `no session memory`: no session-memory notes (no memory requests; a compaction is always a
  summary request).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput
from agent_repl.tools import builtin_tools
from agent_repl.tools.read import Read, ReadArgs

_OUR_NUMBER = re.compile(r"^ *(\d+)\u2192", re.MULTILINE)


def compact_numbering(text: str) -> str:
    return _OUR_NUMBER.sub(lambda m: f"{m.group(1)}\t", text)


class CompactNumberedRead(Read):
    async def run(self, args: ReadArgs, ctx: ToolContext) -> ToolOutput:
        output = await super().run(args, ctx)
        if isinstance(output.content, str) and not output.is_error:
            return dataclasses.replace(output, content=compact_numbering(output.content))
        return output


def compact_numbered_tools() -> list[Tool[Any]]:
    return [CompactNumberedRead() if tool.name == "Read" else tool for tool in builtin_tools()]


def no_session_memory(session: Any) -> None:
    session.after_turn_hooks.clear()
    session.memory = None


@dataclasses.dataclass(frozen=True)
class Lever:
    name: str
    tools: Callable[[], list[Tool[Any]]] | None = None
    configure: Callable[[Any], None] | None = None


DEFAULTS = Lever("agent-repl")
LEVERS = (
    Lever("agent-repl, compact numbering", tools=compact_numbered_tools),
    Lever("agent-repl, no session memory", configure=no_session_memory),
    Lever("agent-repl, both", tools=compact_numbered_tools, configure=no_session_memory),
)
