"""/mcp: the MCP servers of this session, their status and their tools (no server is contacted)."""

from __future__ import annotations

from agent_repl.commands.registry import CommandContext
from agent_repl.commands.results import CommandResult, McpReport

CONFIG_HINT = (
    'add servers to .mcp.json in the project ({"mcpServers": {"name": {"command": ..., "args": [...]}}} '
    'or {"type": "http", "url": ...}) or under "mcp_servers" in ~/.agent_repl/settings.json'
)


async def mcp_command(ctx: CommandContext, args: str) -> CommandResult:
    session = ctx.session
    manager = session.mcp
    servers = manager.status() if manager is not None else []
    return McpReport(
        servers=servers,
        deferred=len(session.deferred_tools),
        tool_search=session.settings.tool_search,
        config_hint="" if servers else CONFIG_HINT,
    )
