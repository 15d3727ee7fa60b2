"""The built-in tools: Read, Bash, Grep, Glob and Snip (SPEC R2.3), each a pydantic args model plus a .md."""

from __future__ import annotations

from agent_repl.core.tool import Tool
from tools.bash import Bash, BashArgs
from tools.glob import Glob, GlobArgs
from tools.grep import Grep, GrepArgs
from tools.read import Read, ReadArgs
from tools.snip import Snip, SnipArgs

__all__ = [
    "Bash",
    "BashArgs",
    "Glob",
    "GlobArgs",
    "Grep",
    "GrepArgs",
    "Read",
    "ReadArgs",
    "Snip",
    "SnipArgs",
    "builtin_tools",
]


def builtin_tools() -> list[Tool]:
    """One instance of each built-in tool, sorted by name (the API tool list must be byte-stable)."""
    tools: list[Tool] = [Bash(), Glob(), Grep(), Read(), Snip()]
    return sorted(tools, key=lambda tool: tool.name)
