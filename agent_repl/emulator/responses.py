"""Raw ASGI responses for the streaming paths and the injected connection faults.

Starlette's StreamingResponse always finishes the body; faults need to stop half-way (a dropped
connection), to hold the line open (a stall) or to end with an `event: error`. Each response
records what it sent on the exchange as it goes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from starlette.types import Receive, Scope, Send

from agent_repl.emulator import sse
from agent_repl.emulator.faults import FaultKind
from agent_repl.emulator.recording import Exchange

# uvicorn logs an unfinished response as an error; for an injected drop that is the point.
_DROP_LOG = "ASGI callable returned without completing response."


class _QuietDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != _DROP_LOG


def silence_drop_logs() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _QuietDrops) for f in logger.filters):
        logger.addFilter(_QuietDrops())


async def _wait_for_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def hold_open(receive: Receive, seconds: float, stopping: asyncio.Event) -> None:
    """Wait until the client goes away, the server stops, or `seconds` pass."""
    waiters = [asyncio.ensure_future(_wait_for_disconnect(receive)), asyncio.ensure_future(stopping.wait())]
    try:
        await asyncio.wait(waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiter


def _header_list(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


class EventStreamResponse:
    """Sends a message's SSE events; a fault cuts the stream after the first content delta.

    `on_start` runs as message_start goes out (cache entries become visible then); `on_done`
    runs just before message_stop goes out and never for a faulted stream, so a cut-off stream
    never advances the script.
    """

    def __init__(
        self,
        events: list[sse.Event],
        *,
        headers: dict[str, str],
        exchange: Exchange,
        request_id: str,
        on_start: Callable[[], None],
        on_done: Callable[[], None],
        fault: FaultKind | None,
        stall_seconds: float,
        stopping: asyncio.Event,
    ) -> None:
        self.events = events
        self.headers = {
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            **headers,
        }
        self.exchange = exchange
        self.request_id = request_id
        self.on_start = on_start
        self.on_done = on_done
        self.fault = fault
        self.stall_seconds = stall_seconds
        self.stopping = stopping

    async def _send_event(self, send: Send, name: str, data: dict[str, Any]) -> None:
        if name == "message_start":
            self.on_start()
        self.exchange.events.append({"event": name, "data": data})
        body = sse.encode(name, data)
        self.exchange.response_bytes += len(body)
        await send({"type": "http.response.body", "body": body, "more_body": True})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.exchange.status = 200
        self.exchange.stream = True
        await send({"type": "http.response.start", "status": 200, "headers": _header_list(self.headers)})
        events = self.events
        if self.fault is not None:
            events = events[: sse.cut_point(events)]
        last = len(events) - 1
        for i, (name, data) in enumerate(events):
            if i == last and self.fault is None:
                # Settle before message_stop leaves: a client that reacts to it sees the new state.
                self.exchange.finished = True
                self.on_done()
            await self._send_event(send, name, data)
        if self.fault is FaultKind.STREAM_ERROR:
            name, data = sse.error_event("overloaded_error", "Overloaded", self.request_id)
            await self._send_event(send, name, data)
        elif self.fault is FaultKind.STALL:
            await hold_open(receive, self.stall_seconds, self.stopping)
            return  # still unfinished: the connection is closed under the client
        elif self.fault is FaultKind.DROP:
            return
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        self.exchange.finished = True


class DroppedResponse:
    """Headers and half a body, then the connection closes (a non-streaming drop or stall)."""

    def __init__(
        self,
        body: bytes,
        *,
        headers: dict[str, str],
        exchange: Exchange,
        stall: float = 0.0,
        stopping: asyncio.Event | None = None,
    ) -> None:
        self.body = body
        self.headers = {"content-type": "application/json", "content-length": str(len(body)), **headers}
        self.exchange = exchange
        self.stall = stall
        self.stopping = stopping or asyncio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.exchange.status = 200
        if self.stall:
            await hold_open(receive, self.stall, self.stopping)
        await send({"type": "http.response.start", "status": 200, "headers": _header_list(self.headers)})
        await send(
            {"type": "http.response.body", "body": self.body[: len(self.body) // 2], "more_body": True}
        )
