"""MCP servers the SDK program runs in its own process (`"type": "sdk"` in `--mcp-config`).

Each is an ordinary MCP connection whose transport is the control channel: every JSON-RPC
message the client writes goes to the program as an `mcp_message` control request, and the
`mcp_response` it answers with is what the client reads. The tools then behave as any MCP
server's (names `mcp__<server>__<tool>`, rules, status).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from agent_repl import __version__
from agent_repl.core.model.mcp_config import McpHttpServer, McpStdioServer
from agent_repl.mcp.config import McpServerSpec
from agent_repl.mcp.connection import McpConnection
from agent_repl.sdk.wire import Wire

if TYPE_CHECKING:
    from mcp import Client


class SdkMcpConnection(McpConnection):
    def __init__(
        self, name: str, wire: Wire, *, log_dir: Path, startup_timeout: float, tool_timeout: float
    ) -> None:
        # The config is a placeholder: nothing is started; the program already runs the server.
        spec = McpServerSpec(
            name=name, config=McpStdioServer(command="sdk"), scope="user", source="the SDK program"
        )
        super().__init__(
            spec,
            cwd=log_dir,
            log_dir=log_dir,
            environ={},
            scrubbed=frozenset(),
            startup_timeout=startup_timeout,
            tool_timeout=tool_timeout,
        )
        self.wire = wire

    @property
    def transport(self) -> str:
        return "sdk (in the program's own process)"

    async def _open(self, stack: AsyncExitStack, config: McpStdioServer | McpHttpServer) -> Client:
        from mcp import Client
        from mcp_types import Implementation

        info = Implementation(name="agent-repl", version=__version__)
        client = Client(
            self._relay(), read_timeout_seconds=self.tool_timeout, client_info=info, mode="legacy"
        )
        return await stack.enter_async_context(client)

    def _relay(self) -> AbstractAsyncContextManager[Any]:
        return _relay(self.wire, self.name)


@asynccontextmanager
async def _relay(wire: Wire, server: str) -> AsyncIterator[tuple[Any, Any]]:
    """A client transport: the streams an MCP client reads and writes, pumped over the wire."""
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter

    to_client_send, to_client = anyio.create_memory_object_stream[Any](16)
    from_client, from_client_receive = anyio.create_memory_object_stream[SessionMessage](16)

    async def forward(message: SessionMessage) -> None:
        raw = message.message.model_dump(by_alias=True, mode="json", exclude_none=True)
        try:
            answer = await wire.request({"subtype": "mcp_message", "server_name": server, "message": raw})
        except Exception as exc:  # the program could not answer: the client's request fails
            if "id" in raw and "method" in raw:
                await to_client_send.send(exc)
            return
        reply = answer.get("mcp_response")
        if (
            "id" in raw
            and "method" in raw
            and isinstance(reply, dict)
            and ("result" in reply or "error" in reply)
        ):
            await to_client_send.send(
                SessionMessage(jsonrpc_message_adapter.validate_python(reply, by_name=False))
            )

    async def pump() -> None:
        async with from_client_receive:
            async for message in from_client_receive:
                task = asyncio.create_task(forward(message))
                pending.add(task)
                task.add_done_callback(pending.discard)

    pending: set[asyncio.Task[None]] = set()
    pumping = asyncio.create_task(pump())
    try:
        yield to_client, from_client
    finally:
        pumping.cancel()
        for task in list(pending):
            task.cancel()
        await asyncio.gather(pumping, *pending, return_exceptions=True)
        await to_client_send.aclose()
