"""One MCP server connection, through the official `mcp` SDK, owned by a task of its own.

The SDK runs each transport in an anyio task group: when the transport fails (the process exits,
the HTTP server goes away) it cancels the task that entered it. So the client lives in a runner
task that does nothing else, and a tool call from the query loop waits on its answer, the
runner's end and the user's interrupt together: a dead server is an error value, never a
cancelled turn. A stdio server's stderr goes to a log file beside the session, and its last
lines explain a failure.
"""

from __future__ import annotations

import asyncio
import os
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agent_repl.core.model.mcp_config import McpHttpServer, McpStdioServer
from agent_repl.core.tooling.persisted_output import ensure_private_dir
from agent_repl.mcp.config import McpConfigError, McpServerSpec, expanded, server_environment

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import CallToolResult, Tool

Status = Literal["pending", "connected", "failed", "not started", "closed"]
# How long closing waits for the SDK to stop a server (it escalates to SIGKILL within ~4 s).
CLOSE_WAIT_SECONDS = 6.0
STDERR_TAIL_BYTES = 600
MAX_TOOL_PAGES = 100


class McpCallError(Exception):
    """A call that got no usable answer; the message is what the model is told."""


class McpUnavailable(McpCallError):
    """The server is not connected (it failed to start, or died); its tools cannot run."""


class McpInterrupted(McpCallError):
    """The user interrupted the turn while the call was running; the call was cancelled."""


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe_failure(exc: BaseException) -> str:
    """One line for a connection failure, without the SDK's traceback."""
    leaf = _leaf(exc)
    status = getattr(getattr(leaf, "response", None), "status_code", None)
    if status is not None:
        return f"the server answered HTTP {status}"
    text = str(leaf) or type(leaf).__name__
    if isinstance(leaf, FileNotFoundError):
        return f"the command was not found ({leaf.filename or text})"
    if type(leaf).__name__ == "ConnectError":
        return f"could not connect ({text})"
    return text


class McpConnection:
    def __init__(
        self,
        spec: McpServerSpec,
        *,
        cwd: Path,
        log_dir: Path,
        environ: dict[str, str],
        scrubbed: frozenset[str],
        startup_timeout: float,
        tool_timeout: float,
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self.cwd = cwd
        self.log_path = log_dir / f"{''.join(c if c.isalnum() or c in '-_' else '_' for c in spec.name)}.log"
        self.environ = environ
        # The agent's credentials: never in a server's environment, never expanded into its config.
        self.scrubbed = scrubbed
        self.startup_timeout = startup_timeout
        self.tool_timeout = tool_timeout
        self.status: Status = "pending" if spec.allowed else "not started"
        self.error = "" if spec.allowed else "the folder is not trusted"
        self.tools: list[Tool] = []
        self.server_label = ""
        self._client: Client | None = None
        self._ready = asyncio.Event()
        self._gone = asyncio.Event()
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def transport(self) -> str:
        config = self.spec.config
        if isinstance(config, McpHttpServer):
            return f"http {config.url}"
        return "stdio " + " ".join([config.command, *config.args])

    async def start(self) -> None:
        """Connect and list the tools, or fail with `status`/`error` set; never raises."""
        if not self.spec.allowed:
            return
        try:
            config = expanded(self.spec.config, self.environ, self.scrubbed)
        except McpConfigError as exc:
            self._fail(str(exc), with_stderr=False)
            return
        self._task = asyncio.create_task(self._run(config), name=f"mcp-server-{self.name}")
        try:
            await asyncio.wait_for(self._ready.wait(), self.startup_timeout)
        except TimeoutError:
            self._fail(f"did not answer within {self.startup_timeout:g} s")
            await self.close(wait=False)

    async def _run(self, config: McpStdioServer | McpHttpServer) -> None:
        try:
            async with AsyncExitStack() as stack:
                client = await self._open(stack, config)
                tools = await self._list_tools(client)
                info = client.server_info
                self.server_label = f"{info.name} {info.version}".strip() if info else ""
                self._client, self.tools, self.status = client, tools, "connected"
                self._ready.set()
                await self._closing.wait()
        except asyncio.CancelledError:
            if not self._closing.is_set():
                self._fail("the connection was cancelled")
        except Exception as exc:  # noqa: BLE001 - every way a server can fail becomes its status
            if not self._closing.is_set():
                self._fail(describe_failure(exc))
        finally:
            self._client = None
            if self.status == "connected":
                self.status = "closed"
            self._ready.set()
            self._gone.set()

    async def _open(self, stack: AsyncExitStack, config: McpStdioServer | McpHttpServer) -> Client:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client
        from mcp_types import Implementation

        from agent_repl import __version__

        info = Implementation(name="agent-repl", version=__version__)
        timeout = self.tool_timeout
        if isinstance(config, McpHttpServer):
            http = await stack.enter_async_context(create_mcp_http_client(headers=dict(config.headers) or None))
            transport: Any = streamable_http_client(config.url, http_client=http)
        else:
            ensure_private_dir(self.log_path.parent)
            fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            errlog = stack.enter_context(os.fdopen(fd, "w", encoding="utf-8"))
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env={**server_environment(self.environ, self.scrubbed), **config.env},
                cwd=self.cwd,
            )
            transport = stdio_client(params, errlog=errlog)
        return await stack.enter_async_context(Client(transport, read_timeout_seconds=timeout, client_info=info))

    async def _list_tools(self, client: Client) -> list[Tool]:
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(MAX_TOOL_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    def _fail(self, reason: str, *, with_stderr: bool = True) -> None:
        tail = self.stderr_tail() if with_stderr else ""
        self.status = "failed"
        self.error = f"{reason}; its stderr ended with: {tail}" if tail else reason

    def stderr_tail(self) -> str:
        try:
            with self.log_path.open("rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - STDERR_TAIL_BYTES))
                data = f.read()
        except OSError:
            return ""
        lines = [line.strip() for line in data.decode("utf-8", errors="replace").splitlines() if line.strip()]
        return " | ".join(lines[-3:])

    def _gone_during_call(self) -> str:
        return (
            f"the MCP server {self.name!r} went away during the call: {self.error}. "
            "Its tools cannot be used for the rest of this session."
        )

    def unavailable_reason(self) -> str:
        if self.status == "failed":
            return f"the MCP server {self.name!r} is not connected: {self.error}"
        return f"the MCP server {self.name!r} is not connected ({self.status})"

    async def call(self, tool: str, arguments: dict[str, Any], cancelled: asyncio.Event) -> CallToolResult:
        """The server's answer; raises McpCallError (McpUnavailable, McpInterrupted) for no answer."""
        client = self._client
        if client is None or self.status != "connected":
            raise McpUnavailable(self.unavailable_reason())
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        call = asyncio.ensure_future(client.call_tool(tool, arguments, read_timeout_seconds=self.tool_timeout))
        gone = asyncio.ensure_future(self._gone.wait())
        interrupted = asyncio.ensure_future(cancelled.wait())
        try:
            done, _ = await asyncio.wait(
                {call, gone, interrupted}, timeout=self.tool_timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for waiter in (gone, interrupted):
                waiter.cancel()
        if call in done:
            try:
                return call.result()
            except MCPError as exc:
                if exc.code == CONNECTION_CLOSED:
                    await self._died()
                    raise McpUnavailable(self._gone_during_call()) from exc
                raise McpCallError(f"the MCP server {self.name!r} answered with an error: {exc.message}") from exc
            except Exception as exc:  # noqa: BLE001 - a broken answer is the model's to hear about
                raise McpCallError(f"the call to the MCP server {self.name!r} failed: {describe_failure(exc)}") from exc
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        if interrupted in done:
            raise McpInterrupted("interrupted")
        if gone in done:
            raise McpUnavailable(self._gone_during_call())
        raise McpCallError(f"the MCP server {self.name!r} did not answer within {self.tool_timeout:g} s")

    async def _died(self) -> None:
        """The server is gone: remember why, then let the runner close the transport."""
        if self.status == "connected":
            self._fail("it exited or closed the connection")
        await self.close()

    async def close(self, *, wait: bool = True) -> None:
        """Stop the server: a connected runner winds its transport down; any other is cancelled."""
        self._closing.set()
        task = self._task
        if task is None or task.done():
            return
        if wait and self._client is not None:
            await asyncio.wait({task}, timeout=CLOSE_WAIT_SECONDS)
        if not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=CLOSE_WAIT_SECONDS)
