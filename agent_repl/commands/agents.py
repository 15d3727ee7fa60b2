"""/agents: the sub-agent types the Task tool can start, where each is defined, its tools and model."""

from __future__ import annotations

from agent_repl.agents.definitions import PROJECT_DIRS, tool_names_for
from agent_repl.commands.registry import CommandContext
from agent_repl.commands.results import AgentRow, AgentsReport, CommandResult

DEFINE_HINT = (
    "define more as Markdown files with front matter (name, description, tools, model) in "
    f"{', '.join(f'{d}/' for d in PROJECT_DIRS)} or ~/.agent_repl/agents/"
)


async def agents_command(ctx: CommandContext, args: str) -> CommandResult:
    from agent_repl.agents.runner import SubagentRunner

    session = ctx.session
    runner = session.tool_ports.subagents
    if not isinstance(runner, SubagentRunner):
        return AgentsReport(agents=[], problems=["sub-agents are not available in this session"], hint=DEFINE_HINT)
    names = list(session.tools)
    rows = [
        AgentRow(
            name=d.name,
            description=d.description,
            scope=d.scope,
            source=d.source,
            tools=tool_names_for(d, names, default=runner.default_tools),
            model=d.model or "inherit",
        )
        for d in runner.catalog.sorted()
    ]
    return AgentsReport(agents=rows, problems=list(runner.catalog.problems), hint=DEFINE_HINT)
