"""KillShell: stops a background shell and its whole process group (Claude Code's tool name and input)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field

from agent_repl.core.tooling.display import HEADLINE_WIDTH, ToolDisplay, one_line
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, load_description
from agent_repl.tools._common import ToolArgs, background_shell


class KillShellArgs(ToolArgs):
    shell_id: str = Field(min_length=1, description="The ID of the background shell to kill")


class KillShellDisplay(ToolDisplay):
    """`KillShell(bash_1)`."""

    def headline(self, name: str, tool_input: Mapping[str, Any], width: int = HEADLINE_WIDTH) -> str:
        return one_line(f"{name}({tool_input.get('shell_id', '')})", width)


class KillShell(Tool[KillShellArgs]):
    name = "KillShell"
    display: ClassVar[ToolDisplay] = KillShellDisplay()
    args_model = KillShellArgs
    # It only stops a command the session itself started in the background: nothing to ask.
    is_read_only: ClassVar[bool] = True
    description = load_description(__file__, "kill_shell")

    async def run(self, args: KillShellArgs, ctx: ToolContext) -> ToolOutput:
        found = background_shell(ctx, args.shell_id)
        if isinstance(found, ToolOutput):
            return found
        shells, shell = found
        if shell.status != "running":
            code = f" (exit code {shell.exit_code})" if shell.exit_code is not None else ""
            return ToolOutput.error(f"Shell {shell.shell_id} is not running: it {shell.status}{code}.")
        await shells.kill(shell)
        structured = {"shell_id": shell.shell_id, "command": shell.command, "message": f"Killed {shell.shell_id}"}
        return ToolOutput(
            content=f"Killed background shell {shell.shell_id} ({shell.command}).",
            structured=structured,
            summary=f"killed {shell.shell_id}",
        )
