"""The built-in tools (docs/architecture.md 7.1), each a pydantic args model plus a .md."""

from __future__ import annotations

from agent_repl.core.tooling.display import ToolDisplays
from agent_repl.core.tooling.tool import Tool
from agent_repl.tools.bash import Bash, BashArgs
from agent_repl.tools.bash_output import BashOutput, BashOutputArgs
from agent_repl.tools.edit import Edit, EditArgs
from agent_repl.tools.exit_plan_mode import ExitPlanMode, ExitPlanModeArgs
from agent_repl.tools.glob import Glob, GlobArgs
from agent_repl.tools.grep import Grep, GrepArgs
from agent_repl.tools.kill_shell import KillShell, KillShellArgs
from agent_repl.tools.read import Read, ReadArgs
from agent_repl.tools.snip import Snip, SnipArgs
from agent_repl.tools.todo_write import TodoWrite, TodoWriteArgs
from agent_repl.tools.write import Write, WriteArgs

__all__ = [
    "Bash",
    "BashArgs",
    "BashOutput",
    "BashOutputArgs",
    "Edit",
    "EditArgs",
    "ExitPlanMode",
    "ExitPlanModeArgs",
    "Glob",
    "GlobArgs",
    "Grep",
    "GrepArgs",
    "KillShell",
    "KillShellArgs",
    "Read",
    "ReadArgs",
    "Snip",
    "SnipArgs",
    "TodoWrite",
    "TodoWriteArgs",
    "Write",
    "WriteArgs",
    "builtin_displays",
    "builtin_tools",
]


def builtin_tools() -> list[Tool]:
    """One instance of each built-in tool, sorted by name (the API tool list must be byte-stable)."""
    tools: list[Tool] = [
        Bash(), BashOutput(), Edit(), ExitPlanMode(), Glob(), Grep(), KillShell(), Read(), Snip(), TodoWrite(), Write()
    ]
    return sorted(tools, key=lambda tool: tool.name)


def builtin_displays() -> ToolDisplays:
    """How the built-in tools show, without a session (a resume's preview, drawn before it opens)."""
    from agent_repl.tools.skill import Skill
    from agent_repl.tools.task import Task

    classes = [type(tool) for tool in builtin_tools()] + [Task, Skill]
    return ToolDisplays({cls.name: cls.display for cls in classes})
