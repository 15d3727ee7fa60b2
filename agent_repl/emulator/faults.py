"""Fault injection: which request gets which failure.

A `FaultPlan` answers one question per `POST /v1/messages`: does request number N (0-based,
counting every attempt the server receives, retries included) fail, and how? Faults come from
three places, checked in this order: a queue of "the next request(s)" faults, faults pinned to a
request index, and random injection at a rate from a seeded generator.

Spec language (`--faults`, `POST /_emulator/faults {"spec": ...}`), comma-separated items:
    2:429, 3:529, 4:500, 5:stream_error, 7:stall, 9:drop, 11:prompt_too_long   pinned faults
    rate=0.2, seed=7, kinds=429|529|500|stream_error                           random faults
    retry_after_ms=20, stall_seconds=30                                         tuning
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class FaultKind(StrEnum):
    RATE_LIMIT = "429"
    SERVER_ERROR = "500"
    OVERLOADED = "529"
    STREAM_ERROR = "stream_error"
    STALL = "stall"
    DROP = "drop"
    PROMPT_TOO_LONG = "prompt_too_long"


_ALIASES = {
    "rate_limit": FaultKind.RATE_LIMIT,
    "overloaded": FaultKind.OVERLOADED,
    "api_error": FaultKind.SERVER_ERROR,
    "error": FaultKind.STREAM_ERROR,
}
DEFAULT_RANDOM_KINDS = (FaultKind.RATE_LIMIT, FaultKind.OVERLOADED, FaultKind.SERVER_ERROR)


def parse_kind(text: str) -> FaultKind:
    text = text.strip().lower()
    if text in _ALIASES:
        return _ALIASES[text]
    try:
        return FaultKind(text)
    except ValueError:
        names = ", ".join(k.value for k in FaultKind)
        raise ValueError(f"unknown fault kind {text!r} (expected one of: {names})") from None


@dataclass
class FaultPlan:
    """Thread-safe: the server's loop thread reads it while tests change it from theirs."""

    pinned: dict[int, FaultKind] = field(default_factory=dict)
    queued: list[FaultKind] = field(default_factory=list)
    rate: float = 0.0
    kinds: tuple[FaultKind, ...] = DEFAULT_RANDOM_KINDS
    seed: int = 0
    retry_after_ms: int = 20
    stall_seconds: float = 30.0
    _rng: random.Random = field(init=False, repr=False)
    _lock: threading.Lock = field(init=False, repr=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    @classmethod
    def parse(cls, spec: str | None) -> FaultPlan:
        plan = cls()
        plan.apply_spec(spec or "")
        return plan

    def apply_spec(self, spec: str) -> None:
        """Merge a spec string into this plan (pinned items add up; settings replace)."""
        with self._lock:
            for item in filter(None, (part.strip() for part in spec.split(","))):
                key, sep, value = item.partition("=")
                if sep:
                    self._set_option(key.strip().lower(), value.strip())
                    continue
                index, colon, kind = item.partition(":")
                if not colon or not index.strip().isdigit():
                    raise ValueError(f"bad fault item {item!r}: expected INDEX:KIND or KEY=VALUE")
                self.pinned[int(index)] = parse_kind(kind)

    def _set_option(self, key: str, value: str) -> None:
        if key == "rate":
            self.rate = float(value)
            if not 0.0 <= self.rate <= 1.0:
                raise ValueError(f"fault rate must be within 0..1, got {value}")
        elif key == "seed":
            self.seed = int(value)
            self._rng = random.Random(self.seed)
        elif key == "kinds":
            self.kinds = tuple(parse_kind(k) for k in value.split("|") if k.strip())
        elif key == "retry_after_ms":
            self.retry_after_ms = int(value)
        elif key == "stall_seconds":
            self.stall_seconds = float(value)
        else:
            raise ValueError(f"unknown fault option {key!r}")

    def at(self, request_index: int, kind: FaultKind | str) -> None:
        """Fail the request with this index."""
        with self._lock:
            self.pinned[request_index] = parse_kind(str(kind))

    def next(self, kind: FaultKind | str, count: int = 1) -> None:
        """Fail the next `count` requests, whatever their index."""
        with self._lock:
            self.queued.extend([parse_kind(str(kind))] * count)

    def clear(self) -> None:
        with self._lock:
            self.pinned.clear()
            self.queued.clear()
            self.rate = 0.0
            self._rng = random.Random(self.seed)

    def take(self, request_index: int) -> FaultKind | None:
        """The fault for this request, consuming queued and pinned entries."""
        with self._lock:
            if self.queued:
                return self.queued.pop(0)
            if request_index in self.pinned:
                return self.pinned.pop(request_index)
            if self.rate > 0 and self.kinds and self._rng.random() < self.rate:
                return self._rng.choice(self.kinds)
            return None

    def retry_headers(self) -> dict[str, str]:
        """Small retry delays so SDK retries in tests take milliseconds."""
        seconds = max(1, -(-self.retry_after_ms // 1000))
        return {"retry-after-ms": str(self.retry_after_ms), "retry-after": str(seconds)}

    def to_dict(self) -> dict[str, Any]:
        with self._lock:
            return {
                "pinned": {str(i): k.value for i, k in sorted(self.pinned.items())},
                "queued": [k.value for k in self.queued],
                "rate": self.rate,
                "kinds": [k.value for k in self.kinds],
                "seed": self.seed,
                "retry_after_ms": self.retry_after_ms,
                "stall_seconds": self.stall_seconds,
            }
