"""A small MCP server for the tests, built on the official `mcp` SDK's server side.

    python mcp_test_server.py [--http PORT] [--many N] [--banner]

Over stdio by default, or streamable HTTP on 127.0.0.1:PORT at /mcp. Its tools: echo, add,
picture (an image and a caption), big (long text), env (one environment variable), headers (the
Authorization header of the HTTP request that called it), crash (the process exits), and with
--many N also N generated `record_NN` tools with long descriptions, for deferred loading.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ImageContent

# A 1x1 red PNG.
RED_PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
LAST_AUTHORIZATION: dict[str, str] = {"value": "<none>"}


def build(many: int) -> MCPServer:
    server = MCPServer("agent-repl-test-server", version="1.0")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back, prefixed with 'echo: '."""
        return f"echo: {text}"

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two whole numbers."""
        return str(a + b)

    @server.tool()
    def picture() -> list[Any]:
        """A tiny picture with a caption."""
        return [ImageContent(type="image", data=RED_PIXEL, mime_type="image/png"), "a red pixel"]

    @server.tool()
    def big(lines: int) -> str:
        """Many numbered lines of text."""
        return "\n".join(f"line {i:06d} of the big output" for i in range(lines))

    @server.tool()
    def env(name: str) -> str:
        """The value of one environment variable of this server's process."""
        return os.environ.get(name, "<unset>")

    @server.tool()
    def headers() -> str:
        """The Authorization header the last HTTP request to this server carried."""
        return LAST_AUTHORIZATION["value"]

    @server.tool()
    async def slow(seconds: float) -> str:
        """Wait, then answer."""
        await asyncio.sleep(seconds)
        return f"waited {seconds} s"

    @server.tool()
    def crash() -> str:
        """Exit the server process at once."""
        print("test server: crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)

    for index in range(many):
        server.add_tool(
            _record_tool(index),
            name=f"record_{index:02d}",
            description=(
                f"Look up record number {index} of the inventory ledger and report its status, owner, "
                "location, last audit date, the audit notes and every change made to it since it was "
                "created, oldest first. Use the fields argument to limit the answer to some fields."
            ),
        )
    return server


def _record_tool(index: int) -> Any:
    def record(fields: str = "all", include_history: bool = True, limit: int = 10) -> str:
        return f"record {index}: status ok (fields={fields}, history={include_history}, limit={limit})"

    return record


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    parser.add_argument("--many", type=int, default=0)
    parser.add_argument("--banner", action="store_true", help="print a line that is not JSON-RPC to stdout first")
    args = parser.parse_args()
    server = build(args.many)
    if args.banner:
        print("Welcome to the test server!", flush=True)
    if args.http is None:
        server.run()
        return
    import uvicorn

    app = server.streamable_http_app()

    class RecordAuthorization:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                found = dict(scope["headers"]).get(b"authorization")
                if found is not None:
                    LAST_AUTHORIZATION["value"] = found.decode()
            await self.inner(scope, receive, send)

    uvicorn.run(RecordAuthorization(app), host="127.0.0.1", port=args.http, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
