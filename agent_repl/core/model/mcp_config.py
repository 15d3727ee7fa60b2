"""How an MCP server is configured: Claude Code's `.mcp.json` entry, also accepted in settings.

    {"command": "...", "args": [...], "env": {...}}                 stdio (the default type)
    {"type": "http", "url": "...", "headers": {...}}                streamable HTTP

Strings may hold `${VAR}` or `${VAR:-default}`; they are expanded when the server starts
(agent_repl.mcp.config), not here, so a settings file never stores a secret it only names.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

MCP_TOOL_PREFIX = "mcp__"
_NOT_IN_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")


class McpStdioServer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)


class McpHttpServer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["http"]
    url: str = Field(min_length=1)
    headers: dict[str, str] = Field(default_factory=dict)


def _server_type(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("type", "stdio"))
    return str(getattr(value, "type", "stdio"))


McpServerConfig = Annotated[
    Annotated[McpStdioServer, Tag("stdio")] | Annotated[McpHttpServer, Tag("http")],
    Discriminator(
        _server_type,
        custom_error_type="mcp_server_type",
        custom_error_message='type must be "stdio" (the default, with "command") or "http" (with "url")',
    ),
]


def normalize_name(name: str) -> str:
    """A server or tool name as it may appear in an API tool name (Claude Code's rule)."""
    return _NOT_IN_TOOL_NAME.sub("_", name)


def mcp_tool_name(server: str, tool: str) -> str:
    return f"{MCP_TOOL_PREFIX}{normalize_name(server)}__{normalize_name(tool)}"


def server_of_tool(name: str) -> str | None:
    """`mcp__github__create_issue` -> `github`; None for a name that is not an MCP tool's."""
    if not name.startswith(MCP_TOOL_PREFIX):
        return None
    server, separator, _ = name[len(MCP_TOOL_PREFIX) :].partition("__")
    return server if separator and server else None
