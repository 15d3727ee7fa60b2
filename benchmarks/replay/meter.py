"""The emulator's engine with a log of every request: its kind, when it started on the simulated
clock, what it cost and which thinking blocks it sent back.

The log replaces reading the server's recordings afterwards (which a long 1M-window run would
overflow): the harness computes a run's numbers from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_repl.emulator.compaction import compaction_requested
from agent_repl.emulator.engine import Completion, Engine, Prepared
from agent_repl.emulator.policies.summary import request_kind

# Past this gap since the session's previous request the 5-minute cache has expired.
PAUSE_SECONDS = 300.0


@dataclass
class RequestLog:
    index: int
    kind: str  # main, summary (ours or the API's on-demand compaction) or memory
    started_at: float
    gap: float | None  # seconds since the session's previous request started (None: the first)
    total_tokens: int
    overflow: bool
    usage: dict[str, Any] | None = None
    output_tokens: int = 0

    @property
    def written(self) -> int:
        return int((self.usage or {}).get("cache_creation_input_tokens") or 0)


def _kind(body: dict[str, Any]) -> str:
    if compaction_requested(body):
        return "summary"
    return request_kind(body) or "main"


def _assistant_messages(body: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [
        [b for b in m["content"] if isinstance(b, dict)]
        for m in body.get("messages") or []
        if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("content"), list)
    ]


def _first_tool_use(blocks: list[dict[str, Any]]) -> str | None:
    return next((str(b.get("id")) for b in blocks if b.get("type") == "tool_use"), None)


@dataclass
class ThinkingLedger:
    """Thinking blocks the model wrote, by the reply they came in (its first tool call), and those
    a later main request sent that reply without."""

    written: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)

    def replied(self, content: list[dict[str, Any]]) -> None:
        thinking = sum(1 for b in content if b.get("type") in ("thinking", "redacted_thinking"))
        key = _first_tool_use(content)
        if thinking and key is not None:
            self.written[key] = thinking

    def sent(self, body: dict[str, Any]) -> None:
        for blocks in _assistant_messages(body):
            key = _first_tool_use(blocks)
            if key is None or key not in self.written:
                continue
            present = sum(1 for b in blocks if b.get("type") in ("thinking", "redacted_thinking"))
            missing = self.written[key] - present
            if missing > self.dropped.get(key, 0):
                self.dropped[key] = missing


class MeteredEngine(Engine):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log: list[RequestLog] = []
        self.thinking = ThinkingLedger()
        self._by_serial: dict[int, RequestLog] = {}

    def prepare(self, body: dict[str, Any], **kwargs: Any) -> Prepared:
        prepared = super().prepare(body, **kwargs)
        previous = self.log[-1].started_at if self.log else None
        entry = RequestLog(
            index=prepared.request_index,
            kind=_kind(body),
            started_at=prepared.started_at,
            gap=None if previous is None else prepared.started_at - previous,
            total_tokens=prepared.total_input_tokens,
            overflow=prepared.total_input_tokens > self.window_for(prepared.spec),
        )
        self.log.append(entry)
        self._by_serial[prepared.serial] = entry
        if entry.kind == "main" and not entry.overflow:
            self.thinking.sent(body)
        return prepared

    def commit(self, prepared: Prepared, message_id: str | None = None) -> None:
        super().commit(prepared, message_id)
        entry = self._by_serial.get(prepared.serial)
        if entry is not None:
            entry.usage = dict(prepared.usage)

    def completed(self, prepared: Prepared, completion: Completion) -> None:
        super().completed(prepared, completion)
        entry = self._by_serial.pop(prepared.serial, None)
        if entry is None:
            return
        entry.output_tokens = completion.output_tokens
        if entry.kind == "main":
            self.thinking.replied(completion.content)
