"""The numbers a run is judged by, as pure functions of what the emulator metered and the final view.

Cost units are input-token equivalents at the model's own multipliers:

    uncached + 1.25 x 5m cache write + 2 x 1h cache write + read multiplier x cache read
    + output x (output price / input price)

so one unit is one uncached input token, whatever the model's price (multiply by its input price
per token for dollars; `usage_totals()["cost_usd"]` is exactly that).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_repl.emulator.models import ModelSpec


def cost_units(totals: Mapping[str, Any], spec: ModelSpec) -> float:
    return (
        totals["input_tokens"]
        + spec.cache_write_5m_multiplier * totals["cache_write_5m_tokens"]
        + spec.cache_write_1h_multiplier * totals["cache_write_1h_tokens"]
        + spec.cache_read_multiplier * totals["cache_read_tokens"]
        + spec.output_usd_per_mtok / spec.input_usd_per_mtok * totals["output_tokens"]
    )


def input_total(totals: Mapping[str, Any]) -> int:
    return (
        totals["input_tokens"]
        + totals["cache_write_5m_tokens"]
        + totals["cache_write_1h_tokens"]
        + totals["cache_read_tokens"]
    )


def cache_read_share(totals: Mapping[str, Any]) -> float:
    total = input_total(totals)
    return totals["cache_read_tokens"] / total if total else 0.0


def usage_input(usage: Mapping[str, Any]) -> int:
    """All input tokens of one response: uncached + cache writes + cache reads."""
    return (
        int(usage.get("input_tokens") or 0)
        + int(usage.get("cache_creation_input_tokens") or 0)
        + int(usage.get("cache_read_input_tokens") or 0)
    )


def new_tokens(series: Iterable[int]) -> int:
    """What a run of main requests added beyond the previous request's prompt: the least it could
    have written to the cache had every request read all of the previous one."""
    total, previous = 0, 0
    for tokens in series:
        total += max(0, tokens - previous)
        previous = tokens
    return total


def same_line_endings(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def is_prefix_rewrite(usage: Mapping[str, Any], *, min_tokens: int = 20_000) -> bool:
    """A request that wrote more than half of its prompt (and at least `min_tokens`) to the cache."""
    written = int(usage.get("cache_creation_input_tokens") or 0)
    return written >= min_tokens and written > usage_input(usage) / 2


def in_view(text: str, view: str) -> bool:
    """Whether `text` is in the view verbatim, up to line endings (CRLF and LF count as the same).

    `view` is the view's text: every string of the last request's messages, joined.
    """
    return same_line_endings(text) in view


def view_text(messages: Any) -> str:
    """Every string in a request's messages (texts, tool results, tool inputs), line endings unified."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(messages)
    return same_line_endings("\n".join(parts))


def retention(texts: Iterable[str], view: str) -> tuple[int, int]:
    """(how many of `texts` the view holds verbatim, how many there are)."""
    items = [t for t in texts if t.strip()]
    return sum(in_view(t, view) for t in items), len(items)


# What the retention after each compaction is measured on (`RunResult.after_compaction`).
RETAINED_KINDS = ("users", "files", "todos", "needles")


def todo_items(steps: Iterable[Any]) -> list[str]:
    """The items of the todo list the last successful TodoWrite call of `steps` wrote."""
    items: list[str] = []
    for step in steps:
        for call in step.tools:
            todos = call.input.get("todos") if call.name == "TodoWrite" and not call.is_error else None
            if isinstance(todos, list):
                items = [str(t.get("content", "")) for t in todos if isinstance(t, dict) and t.get("content")]
    return items


def retention_point(view: str, measured: Mapping[str, Iterable[str]]) -> dict[str, list[int]]:
    """For each kind (users, files, ...), [how many the view holds verbatim, how many there are]."""
    return {kind: list(retention(texts, view)) for kind, texts in measured.items()}


def mean_abs(values: Iterable[float]) -> float | None:
    items = [abs(v) for v in values]
    return sum(items) / len(items) if items else None


@dataclass
class RunResult:
    """One strategy on one trajectory at one window size."""

    trajectory: str
    strategy: str
    window: int
    steps: int  # model replies the trajectory has
    # "measured": the recorded or measured gaps; "pauses": some between-turn gaps made long pauses.
    condition: str = "measured"
    main_requests: int = 0  # main-thread requests the API answered
    overflow_errors: int = 0  # requests the API refused as too long
    # Where the run stopped early (the main request that could not be answered) and why.
    stopped_at: int | None = None
    stop_reason: str = ""
    totals: dict[str, Any] = field(default_factory=dict)
    cost_units: float = 0.0
    usd: float = 0.0  # at list price
    cache_read_share: float = 0.0
    peak_input: int = 0
    compactions: int = 0
    summary_calls: int = 0
    memory_calls: int = 0
    estimate_errors: list[float] = field(default_factory=list)
    pipeline_cpu_seconds: float = 0.0
    projections: int = 0
    users_kept: int = 0
    users_total: int = 0
    files_kept: int = 0
    files_total: int = 0
    input_series: list[int] = field(default_factory=list)
    # Output tokens by request kind (main, summary, memory): summaries and notes are billed as output.
    output_by_kind: dict[str, int] = field(default_factory=dict)
    # Main requests that wrote most of their prompt to the cache again (a broken prefix).
    prefix_rewrites: int = 0
    # Main requests after a pause past the 5-minute cache lifetime, and those that wrote more than
    # half of their prompt to the cache again.
    pauses: int = 0
    pause_rewrites: int = 0
    # Thinking blocks the model wrote, and those a later request sent their reply without.
    thinking_written: int = 0
    thinking_dropped: int = 0
    # The summaries the emulator wrote: realistic, lossy or extractive (`summarizers.py`).
    summaries: str = "realistic"
    # At the first main request after each compaction: its input tokens ("tokens"), those above
    # the run's first main request ("above_base"), and for each of RETAINED_KINDS [kept, total].
    after_compaction: list[dict[str, Any]] = field(default_factory=list)
    # The planted needles the request that asks for them holds: [kept, total] ([0, 0]: none planted).
    needles_at_question: list[int] = field(default_factory=lambda: [0, 0])
    sim_minutes: float = 0.0  # the session's length on the simulated clock
    # Side records of the transcript by type (snip, cache-edit, content-replacement, ...).
    records: dict[str, int] = field(default_factory=dict)
    wall_seconds: float = 0.0

    @property
    def completed(self) -> bool:
        return self.stopped_at is None

    @property
    def cpu_ms_per_request(self) -> float:
        return 1000 * self.pipeline_cpu_seconds / self.projections if self.projections else 0.0


@dataclass
class Aggregate:
    """One strategy over every trajectory of one window size."""

    strategy: str
    runs: list[RunResult]

    def _sum(self, name: str) -> float:
        return sum(getattr(r, name) for r in self.runs)

    @property
    def overflows(self) -> int:
        return int(self._sum("overflow_errors"))

    @property
    def stopped(self) -> list[RunResult]:
        return [r for r in self.runs if not r.completed]

    @property
    def cost_units(self) -> float:
        return self._sum("cost_units")

    @property
    def cache_read_share(self) -> float:
        reads = sum(r.totals.get("cache_read_tokens", 0) for r in self.runs)
        total = sum(input_total(r.totals) for r in self.runs if r.totals)
        return reads / total if total else 0.0

    @property
    def peak_input(self) -> int:
        return max((r.peak_input for r in self.runs), default=0)

    @property
    def estimate_error(self) -> float | None:
        return mean_abs(e for r in self.runs for e in r.estimate_errors)

    @property
    def usd(self) -> float:
        return self._sum("usd")

    @property
    def share_limit(self) -> float:
        """The best cache-read share these runs' main prompts allow: 1 - new tokens / their input."""
        total = sum(sum(r.input_series) for r in self.runs)
        return 1 - sum(new_tokens(r.input_series) for r in self.runs) / total if total else 0.0

    @property
    def cpu_ms_per_request(self) -> float:
        projections = self._sum("projections")
        return 1000 * self._sum("pipeline_cpu_seconds") / projections if projections else 0.0

    @property
    def compactions_per_run(self) -> float:
        return self._sum("compactions") / len(self.runs) if self.runs else 0.0

    @property
    def kept_above_base(self) -> float | None:
        """Mean tokens above the first request's prompt at the first request after each compaction."""
        points = [p["above_base"] for r in self.runs for p in r.after_compaction]
        return sum(points) / len(points) if points else None

    def after_compaction(self, kind: str) -> tuple[int, int, int]:
        """(kept, total, compactions that lost some) of `kind` over every compaction of these runs."""
        pairs = [p[kind] for r in self.runs for p in r.after_compaction if p.get(kind)]
        return sum(k for k, _ in pairs), sum(n for _, n in pairs), sum(1 for k, n in pairs if k < n)

    def share(self, kept: str, total: str) -> float | None:
        whole = self._sum(total)
        return self._sum(kept) / whole if whole else None
