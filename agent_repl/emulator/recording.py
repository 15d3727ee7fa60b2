"""Every exchange the emulator served, kept in memory for tests and for `GET /_emulator/requests`.

The request body is kept as the exact bytes received (parsed on demand), so a test can assert
the wire payload byte for byte and a long benchmark does not hold a second parsed copy.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

_SECRET_HEADERS = frozenset({"authorization", "x-api-key"})


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
    """Append-only list of exchanges; safe to read from a test thread while the server writes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []

    def start(
        self, method: str, path: str, query: str, headers: dict[str, str], body: bytes, started_at: float
    ) -> Exchange:
        kept = {k.lower(): v for k, v in headers.items() if k.lower() not in _SECRET_HEADERS}
        with self._lock:
            exchange = Exchange(len(self._exchanges), method, path, query, kept, body, started_at)
            self._exchanges.append(exchange)
        return exchange

    def clear(self) -> None:
        with self._lock:
            self._exchanges.clear()

    @property
    def exchanges(self) -> list[Exchange]:
        with self._lock:
            return list(self._exchanges)

    def for_path(self, path: str) -> list[Exchange]:
        return [e for e in self.exchanges if e.path == path]

    @property
    def messages(self) -> list[Exchange]:
        """The `POST /v1/messages` exchanges, in arrival order."""
        return [e for e in self.exchanges if e.method == "POST" and e.path == "/v1/messages"]

    def __len__(self) -> int:
        with self._lock:
            return len(self._exchanges)

    def to_list(self) -> list[dict[str, Any]]:
        return [e.to_dict() for e in self.exchanges]
