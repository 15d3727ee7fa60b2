"""/hooks: the hooks that apply in this session, where each came from, and its last result."""

from __future__ import annotations

from agent_repl.commands.registry import CommandContext
from agent_repl.commands.results import CommandResult, TextOutput
from agent_repl.core.config.hooks import held_back_hooks
from agent_repl.core.model.visible import show_controls


async def hooks_command(ctx: CommandContext, args: str) -> CommandResult:
    session = ctx.session
    runner = session.hooks
    lines: list[str] = []
    for hook in runner.hooks:
        run = runner.last_runs.get(hook)
        result = run.summary() if run is not None else "not run yet"
        lines.append(f"{hook.name} ({hook.source}, timeout {hook.timeout:g} s): {show_controls(hook.command)}")
        lines.append(f"    last: {show_controls(result)}")
    held = held_back_hooks(session.settings)
    if held:
        lines.append("Not run (this folder is not trusted): " + show_controls(", ".join(held)))
    if not lines:
        return TextOutput('No hooks configured. Add them under "hooks" in <home>/settings.json or .agent_repl/settings.json.')
    return TextOutput("\n".join(lines), level="warning" if held else "info")
