"""/bashes: the session's background commands with their status; `/bashes kill ID` stops one."""

from __future__ import annotations

from agent_repl.commands.registry import CommandContext
from agent_repl.commands.results import CommandResult, TextOutput

BASHES_USAGE = "usage: /bashes [kill ID]"


async def bashes_command(ctx: CommandContext, args: str) -> CommandResult:
    shells = ctx.session.shells
    words = args.split()
    if not words:
        if not shells.shells:
            return TextOutput("No background commands in this session (Bash with run_in_background, or Ctrl+B).")
        lines = [shell.line() for shell in shells.shells.values()]
        return TextOutput("Background commands:\n" + "\n".join(f"  {line}" for line in lines))
    if words[0] != "kill" or len(words) != 2:
        return TextOutput(BASHES_USAGE, level="error")
    shell = shells.get(words[1])
    if shell is None:
        return TextOutput(f"no background command {words[1]!r} (known: {shells.known_ids()})", level="error")
    if shell.status != "running":
        return TextOutput(f"{shell.shell_id} is not running ({shell.status})", level="error")
    await shells.kill(shell)
    shell.announced = False  # the model did not kill it: it hears of it once, like a finished one
    return TextOutput(f"killed {shell.shell_id}: {shell.command}")
