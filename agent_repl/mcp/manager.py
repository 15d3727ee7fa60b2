"""The session's MCP servers: started together, their tools handed to the session, their state for /mcp.

Servers start concurrently, each within its startup timeout; one that fails, times out or is
held back for trust leaves a notice and the others carry on. The tools are taken once, at
start, so the tool list stays byte-stable for the whole session; a server that dies later keeps
its tools in the list and their calls return a clean error. Notices are collected here and the
query loop writes them into the conversation (`take_notices`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_repl.core.config.settings import Settings
from agent_repl.core.tooling.persisted_output import ensure_private_dir
from agent_repl.mcp.config import McpServerSpec, configured_servers
from agent_repl.mcp.connection import McpConnection
from agent_repl.mcp.tool import McpTool

_API_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(frozen=True)
class McpToolStatus:
    name: str
    server_tool: str
    deferred: bool


@dataclass(frozen=True)
class McpServerStatus:
    """One server as /mcp shows it."""

    name: str
    scope: str
    source: str
    transport: str
    status: str
    error: str
    server_label: str
    tools: list[McpToolStatus] = field(default_factory=list)
    log_path: str = ""


SDK_LOGGER = "mcp"


def capture_sdk_logs(path: Path) -> logging.Handler:
    """The SDK's own log lines (a server that prints to stdout, a broken message) go to a file
    beside the servers' stderr logs, never to the terminal the UI draws on."""
    ensure_private_dir(path.parent)
    handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logger = logging.getLogger(SDK_LOGGER)
    logger.addHandler(handler)
    logger.propagate = False
    return handler


def release_sdk_logs(handler: logging.Handler) -> None:
    logger = logging.getLogger(SDK_LOGGER)
    logger.removeHandler(handler)
    handler.close()
    if not logger.handlers:
        logger.propagate = True


class McpManager:
    def __init__(self, connections: list[McpConnection], notices: list[str], sdk_log: logging.Handler | None = None) -> None:
        self.connections = connections
        self._notices = list(notices)
        self._reported_failures: set[str] = set()
        self._sdk_log = sdk_log
        self.tools: list[McpTool] = []
        self.deferred: frozenset[str] = frozenset()

    @classmethod
    async def start(
        cls,
        settings: Settings,
        cwd: Path,
        log_dir: Path,
        environ: dict[str, str] | None = None,
        specs: list[McpServerSpec] | None = None,
        extra: Sequence[McpConnection] = (),
        problems: Sequence[str] = (),
    ) -> McpManager | None:
        """Connect every configured server, and `extra` ones a front end made (an SDK program's own);
        None when there are none and nothing to report. `problems`: what reading the given `specs`
        found wrong (read here when no `specs` are given)."""
        problems = list(problems)
        if specs is None:
            specs, problems = configured_servers(settings, cwd)
        if not specs and not problems and not extra:
            return None
        environ = dict(os.environ) if environ is None else environ
        sdk_log = capture_sdk_logs(log_dir / "sdk.log")
        connections = [
            McpConnection(
                spec,
                cwd=cwd,
                log_dir=log_dir,
                environ=environ,
                scrubbed=settings.scrubbed_env,
                startup_timeout=settings.mcp_startup_timeout,
                tool_timeout=settings.mcp_tool_timeout,
            )
            for spec in specs
        ]
        connections.extend(extra)
        await asyncio.gather(*(c.start() for c in connections))
        manager = cls(connections, problems, sdk_log)
        manager.tools = manager._collect_tools()
        return manager

    def _collect_tools(self) -> list[McpTool]:
        tools: dict[str, McpTool] = {}
        for connection in self.connections:
            if connection.status != "connected":
                continue
            for info in connection.tools:
                tool = McpTool(connection, info)
                if not _API_TOOL_NAME.match(tool.name):
                    self._notices.append(
                        f"MCP tool {info.name!r} of server {connection.name!r} is left out: its name "
                        f"{tool.name} is longer than the API's 64 characters"
                    )
                elif tool.name in tools:
                    self._notices.append(f"MCP tool {tool.name} is offered twice; the second one is left out")
                else:
                    tools[tool.name] = tool
        return [tools[name] for name in sorted(tools)]

    def take_notices(self) -> list[str]:
        """What the user has not been told yet: start problems, then servers that failed since."""
        for connection in self.connections:
            if connection.status == "failed" and connection.name not in self._reported_failures:
                self._reported_failures.add(connection.name)
                verb = "failed to start" if not connection.tools else "stopped working"
                self._notices.append(f"MCP server {connection.name!r} {verb}: {connection.error}")
        notices, self._notices = self._notices, []
        return notices

    def summary(self) -> str:
        """One line for the start of a session: how many servers are up, and where to look."""
        counts: dict[str, int] = {}
        for connection in self.connections:
            counts[connection.status] = counts.get(connection.status, 0) + 1
        states = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        tools = f"{len(self.tools)} tools" + (f", {len(self.deferred)} deferred" if self.deferred else "")
        servers = f"{len(self.connections)} server" + ("s" if len(self.connections) != 1 else "")
        return f"MCP: {servers} ({states}), {tools}; /mcp for details"

    def status(self) -> list[McpServerStatus]:
        by_server: dict[str, list[McpToolStatus]] = {}
        for tool in self.tools:
            by_server.setdefault(tool.connection.name, []).append(
                McpToolStatus(tool.name, tool.server_tool, tool.name in self.deferred)
            )
        return [
            McpServerStatus(
                name=c.name,
                scope=c.spec.scope,
                source=c.spec.source,
                transport=c.transport,
                status=c.status,
                error=c.error,
                server_label=c.server_label,
                tools=by_server.get(c.name, []),
                log_path=str(c.log_path) if c.log_path.is_file() and c.log_path.stat().st_size else "",
            )
            for c in self.connections
        ]

    async def aclose(self) -> None:
        await asyncio.gather(*(c.close() for c in self.connections), return_exceptions=True)
        if self._sdk_log is not None:
            release_sdk_logs(self._sdk_log)
            self._sdk_log = None
