"""The /mcp report as a Rich renderable (the Textual app and the inline REPL both show it)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agent_repl.commands.results import McpReport
from agent_repl.core.model.visible import show_controls

STATUS_STYLE = {"connected": "green", "failed": "bold red", "not started": "yellow", "closed": "dim", "pending": "dim"}


def render_mcp(report: McpReport) -> RenderableType:
    if not report.servers:
        return Text(f"no MCP servers configured; {report.config_hint}", style="dim")
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(justify="right")
    table.add_column(style="dim")
    for server in report.servers:
        table.add_row(
            show_controls(server.name),
            Text(server.status, style=STATUS_STYLE.get(server.status, "")),
            f"{len(server.tools)} tools",
            show_controls(f"{server.scope} · {server.transport}"),
        )
    parts: list[RenderableType] = [Text("MCP servers", style="bold underline"), table]
    if report.deferred:
        parts.append(
            Text(
                f"{report.deferred} MCP tools are deferred: the model loads their definitions with ToolSearch "
                f"(tool_search: {report.tool_search})",
                style="dim",
            )
        )
    for server in report.servers:
        detail = Text()
        detail.append(f"\n{show_controls(server.name)}", style="bold")
        detail.append(f"  {show_controls(server.source)}", style="dim")
        if server.server_label:
            detail.append(f"  ({show_controls(server.server_label)})", style="dim")
        if server.error:
            detail.append(f"\n  {show_controls(server.error)}", style="red" if server.status == "failed" else "yellow")
        if server.log_path:
            detail.append(f"\n  stderr: {show_controls(server.log_path)}", style="dim")
        for tool in server.tools:
            detail.append(f"\n  {show_controls(tool.name)}")
            if tool.deferred:
                detail.append("  deferred", style="dim")
        parts.append(detail)
    return Group(*parts)
