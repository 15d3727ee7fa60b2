"""The latest exchanges the emulator served, kept in memory for tests and for `GET /_emulator/requests`.

The request body is kept as the exact bytes received (parsed on demand), so a test can assert
the wire payload byte for byte and a long benchmark does not hold a second parsed copy. The
recorder is bounded by a count and by bytes (request bodies plus streamed events): past either,
the oldest exchanges are dropped and counted in `dropped`, and `seq` keeps counting, so a reader
can tell what it missed. A test that needs more passes a larger `RecordLimit`.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "x-emulator-token"})


@dataclass(frozen=True)
class RecordLimit:
    """How much the recorder keeps: at most `exchanges` exchanges and about `bytes` of their data."""

    exchanges: int = 2_000
    bytes: int = 256 * 1024 * 1024

    def __post_init__(self) -> None:
        if self.exchanges < 1 or self.bytes < 1:
            raise ValueError("a record limit must keep at least one exchange and one byte")


@dataclass
class Exchange:
    """One HTTP request and what the emulator answered."""

    seq: int  # position among all requests this server recorded
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body_bytes: bytes
    started_at: float
    request_index: int | None = None  # the POST /v1/messages counter the faults and the engine see
    status: int | None = None
    response_body: Any = None
    events: list[dict[str, Any]] = field(default_factory=list)  # SSE events as {"event", "data"}
    usage: dict[str, Any] | None = None
    fault: str | None = None
    stream: bool = False
    finished: bool = False  # False while streaming, or when the stream was cut short
    response_bytes: int = 0  # what was sent back, as counted against the recorder's byte limit

    @property
    def size(self) -> int:
        return len(self.body_bytes) + self.response_bytes

    @property
    def body(self) -> Any:
        """The request body parsed as JSON, or None when it was not valid JSON."""
        try:
            return json.loads(self.body_bytes) if self.body_bytes else None
        except (ValueError, UnicodeDecodeError):
            return None

    @property
    def attempt(self) -> int:
        """The SDK's retry counter for this request (0 for the first attempt)."""
        value = self.headers.get("x-stainless-retry-count", "0")
        return int(value) if value.isdigit() else 0

    def to_dict(self) -> dict[str, Any]:
        body = self.body
        return {
            "seq": self.seq,
            "request_index": self.request_index,
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "headers": self.headers,
            "body": body if body is not None else self.body_bytes.decode("utf-8", "replace"),
            "response": {
                "status": self.status,
                "body": self.response_body,
                "events": self.events,
                "usage": self.usage,
                "stream": self.stream,
                "finished": self.finished,
            },
            "fault": self.fault,
        }


class Recorder:
    """The latest exchanges, oldest first; safe to read from a test thread while the server writes."""

    def __init__(self, limit: RecordLimit | None = None) -> None:
        self.limit = limit or RecordLimit()
        self._lock = threading.Lock()
        self._exchanges: deque[Exchange] = deque()
        self._next_seq = 0
        self.dropped = 0

    def start(
        self, method: str, path: str, query: str, headers: dict[str, str], body: bytes, started_at: float
    ) -> Exchange:
        kept = {k.lower(): v for k, v in headers.items() if k.lower() not in _SECRET_HEADERS}
        with self._lock:
            exchange = Exchange(self._next_seq, method, path, query, kept, body, started_at)
            self._next_seq += 1
            self._exchanges.append(exchange)
            self._evict()
        return exchange

    def _evict(self) -> None:
        """Drop the oldest exchanges past the limits; the newest one always stays."""
        total = sum(e.size for e in self._exchanges)
        while len(self._exchanges) > 1 and (
            len(self._exchanges) > self.limit.exchanges or total > self.limit.bytes
        ):
            total -= self._exchanges.popleft().size
            self.dropped += 1

    def clear(self) -> None:
        with self._lock:
            self._exchanges.clear()
            self._next_seq = 0
            self.dropped = 0

    @property
    def exchanges(self) -> list[Exchange]:
        with self._lock:
            return list(self._exchanges)

    def since(self, seq: int) -> list[Exchange]:
        """The kept exchanges numbered `seq` or later (a poller passes the last seq it saw plus one)."""
        return [e for e in self.exchanges if e.seq >= seq]

    @property
    def messages(self) -> list[Exchange]:
        """The `POST /v1/messages` exchanges, in arrival order."""
        return [e for e in self.exchanges if e.method == "POST" and e.path == "/v1/messages"]

    def __len__(self) -> int:
        with self._lock:
            return len(self._exchanges)

    def to_list(self, since: int = 0) -> list[dict[str, Any]]:
        return [e.to_dict() for e in self.since(since)]
