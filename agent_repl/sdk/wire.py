"""JSON lines on stdin and stdout, and the control requests that travel on them both ways."""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

# The longest line read from stdin (a user message with images can be large; nothing is unbounded).
MAX_LINE_BYTES = 64 * 1024 * 1024


class ControlError(Exception):
    """The SDK answered a control request with an error."""


class StdinLines:
    """Lines of stdin as JSON objects; None at the end of input."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    @classmethod
    async def open(cls) -> StdinLines:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        return cls(reader)

    async def next(self) -> dict[str, Any] | str | None:
        """The next object; a string says why a line was not one (the reading goes on)."""
        while True:
            try:
                raw = await self._reader.readline()
            except ValueError:
                return f"a line on stdin is longer than {MAX_LINE_BYTES} bytes"
            if not raw:
                return None
            text = raw.decode("utf-8", errors="replace").strip()
            if not text:
                continue
            try:
                value = json.loads(text)
            except ValueError:
                return f"a line on stdin is not JSON: {text[:80]!r}"
            return (
                value if isinstance(value, dict) else f"a line on stdin is not a JSON object: {text[:80]!r}"
            )


class Wire:
    """Writes lines to stdout and pairs the control requests it sends with their responses."""

    def __init__(self, out: TextIO = sys.stdout) -> None:
        self._out = out
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}

    def send(self, line: dict[str, Any]) -> None:
        self._out.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._out.flush()

    async def request(self, body: dict[str, Any]) -> dict[str, Any]:
        """Send a control request to the SDK and wait for its answer (raises ControlError)."""
        request_id = f"agent_repl_{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self.send({"type": "control_request", "request_id": request_id, "request": body})
        try:
            return await future
        except asyncio.CancelledError:
            self.send({"type": "control_cancel_request", "request_id": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)

    def answered(self, response: dict[str, Any]) -> None:
        """A `control_response` line from the SDK."""
        future = self._pending.get(str(response.get("request_id")))
        if future is None or future.done():
            return
        if response.get("subtype") == "error":
            future.set_exception(ControlError(str(response.get("error") or "the SDK answered with an error")))
        else:
            body = response.get("response")
            future.set_result(body if isinstance(body, dict) else {})

    def closed(self) -> None:
        """End of input: nobody will answer the requests still open."""
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ControlError("stdin closed before the SDK answered"))

    async def respond(self, request_id: str, handler: Callable[[], Awaitable[dict[str, Any]]]) -> None:
        """Answer one control request from the SDK with what `handler` returns, or its error."""
        try:
            body = await handler()
        except Exception as exc:  # the SDK gets the reason; the session goes on
            self.send(
                {
                    "type": "control_response",
                    "response": {
                        "subtype": "error",
                        "request_id": request_id,
                        "error": str(exc) or type(exc).__name__,
                    },
                }
            )
            return
        self.send(
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": request_id, "response": body},
            }
        )
