"""The prompt-cache simulator (§4.2-4.7).

Two phases: `plan` looks a rendered prompt up and computes the usage split and the entries
to write; `commit` makes the writes visible and refreshes the entries read. The server commits
when the response starts (`message_start`), because an entry is usable only from then on.
Entries are keyed by API key (workspace isolation) and by the cumulative prefix hash.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_repl.emulator.prompt import Position

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
LOOKBACK = 20


@dataclass
class CacheEntry:
    expires_at: float
    ttl: str


@dataclass(frozen=True)
class Breakpoint:
    index: int
    ttl: str


@dataclass(frozen=True)
class CacheUsage:
    """The §4.5 split; input + creation + read = the prompt's total tokens."""

    input_tokens: int
    cache_read_input_tokens: int
    ephemeral_5m_input_tokens: int
    ephemeral_1h_input_tokens: int

    @property
    def cache_creation_input_tokens(self) -> int:
        return self.ephemeral_5m_input_tokens + self.ephemeral_1h_input_tokens


@dataclass(frozen=True)
class CachePlan:
    api_key: str
    started_at: float
    usage: CacheUsage
    hit_index: int | None
    # (prefix hash, ttl) written at commit, and hashes whose TTL a commit refreshes.
    writes: tuple[tuple[bytes, str], ...]
    refreshes: tuple[bytes, ...]


def breakpoints(positions: Sequence[Position], automatic_ttl: str | None) -> list[Breakpoint]:
    """Explicit markers plus the automatic one on the last cacheable block (§4.3)."""
    found = {i: p.ttl for i, p in enumerate(positions) if p.ttl is not None}
    if automatic_ttl is not None:
        for i in range(len(positions) - 1, -1, -1):
            if positions[i].cacheable:
                found.setdefault(i, automatic_ttl)
                break
    return [Breakpoint(i, ttl) for i, ttl in sorted(found.items())]


def split_usage(
    positions: Sequence[Position], points: Sequence[Breakpoint], hit_index: int | None, total: int
) -> CacheUsage:
    """A = the hit, B = the last 1h breakpoint after A (or A), C = the last breakpoint (§4.5)."""
    a = positions[hit_index].cum_tokens if hit_index is not None else 0
    if not points:
        return CacheUsage(total - a, a, 0, 0)
    c = max(a, positions[points[-1].index].cum_tokens)
    later_1h = [p for p in points if p.ttl == "1h" and (hit_index is None or p.index > hit_index)]
    b = max(a, positions[later_1h[-1].index].cum_tokens) if later_1h else a
    return CacheUsage(total - c, a, c - b, b - a)


def automatic_ttl_of(cache_control: object) -> str | None:
    if not isinstance(cache_control, dict):
        return None
    return "1h" if cache_control.get("ttl") == "1h" else "5m"


class PromptCache:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._entries: dict[tuple[str, bytes], CacheEntry] = {}
        self._lock = threading.Lock()
        self._commits = 0

    def _alive(self, api_key: str, prefix_hash: bytes, now: float) -> CacheEntry | None:
        entry = self._entries.get((api_key, prefix_hash))
        return entry if entry is not None and entry.expires_at > now else None

    def plan(
        self,
        positions: Sequence[Position],
        *,
        api_key: str,
        automatic_ttl: str | None,
        min_tokens: int,
        total_tokens: int,
        started_at: float | None = None,
    ) -> CachePlan:
        now = self._clock() if started_at is None else started_at
        # A breakpoint whose prefix is under the model minimum is neither written nor read (§4.4 #5).
        points = [
            b for b in breakpoints(positions, automatic_ttl) if positions[b.index].cum_tokens >= min_tokens
        ]
        with self._lock:
            hit_index: int | None = None
            for point in points:
                for i in range(point.index, max(point.index - LOOKBACK, -1), -1):
                    if self._alive(api_key, positions[i].cum_hash, now) is not None:
                        if hit_index is None or i > hit_index:
                            hit_index = i
                        break
            refreshes = [positions[hit_index].cum_hash] if hit_index is not None else []
            writes: list[tuple[bytes, str]] = []
            for point in points:
                prefix_hash = positions[point.index].cum_hash
                if self._alive(api_key, prefix_hash, now) is None:
                    writes.append((prefix_hash, point.ttl))
                elif point.index != hit_index:
                    refreshes.append(prefix_hash)
        usage = split_usage(positions, points, hit_index, total_tokens)
        return CachePlan(api_key, now, usage, hit_index, tuple(writes), tuple(refreshes))

    def commit(self, plan: CachePlan) -> None:
        """Make the plan's writes visible and refresh what it read; lifetimes count from request start."""
        with self._lock:
            for prefix_hash in plan.refreshes:
                entry = self._entries.get((plan.api_key, prefix_hash))
                if entry is not None:
                    entry.expires_at = max(entry.expires_at, plan.started_at + TTL_SECONDS[entry.ttl])
            for prefix_hash, ttl in plan.writes:
                expires_at = plan.started_at + TTL_SECONDS[ttl]
                entry = self._entries.get((plan.api_key, prefix_hash))
                if entry is None:
                    self._entries[(plan.api_key, prefix_hash)] = CacheEntry(expires_at, ttl)
                else:
                    entry.expires_at = max(entry.expires_at, expires_at)
                    if TTL_SECONDS[ttl] > TTL_SECONDS[entry.ttl]:
                        entry.ttl = ttl
            self._commits += 1
            if self._commits % 256 == 0:
                self._prune(self._clock())

    def _prune(self, now: float) -> None:
        for key in [k for k, e in self._entries.items() if e.expires_at <= now]:
            del self._entries[key]

    def entry_count(self, api_key: str | None = None) -> int:
        with self._lock:
            return sum(1 for key in self._entries if api_key is None or key[0] == api_key)
