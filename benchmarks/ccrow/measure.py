"""What one run measures, read off the requests the emulator saw, the same way for both agents.

A compaction is a main request whose messages no longer extend the previous main request's
(the conversation was rewritten) and whose context is at most `SHRINK` of the previous one's,
whatever wrote its summary (a summary request, the API's compaction, session memory). Other
rewrites (thinking dropped, a reminder moved) are counted apart. At each compaction: the context
the last main request before it sent, the context the first one after it sent, and what that
first request still holds verbatim (its system prompt and messages): the typed prompts sent so
far, the module paths earlier requests' tool calls read, the todo items, the needle facts planted so far.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_repl.emulator.blocks import content_blocks, digest, strip_bookkeeping
from agent_repl.emulator.models import ModelSpec
from benchmarks.ccrow.policy import Client, Kind, classify
from benchmarks.ccrow.sessions import Session
from benchmarks.replay.meter import MeteredEngine, RequestLog
from benchmarks.replay.metrics import cost_units, retention, view_text

# Turn (1-based) in which each needle is planted: codename and reviewer first, the ticket second.
NEEDLE_TURNS = (1, 1, 2)
MEASURES = ("users", "paths", "todos", "needles")
SHRINK = 0.8


@dataclass
class Compaction:
    before: int  # context of the last main request before it
    after: int  # context of the first main request after it
    kept: dict[str, tuple[int, int]] = field(default_factory=dict)  # measure -> (found, total)


@dataclass
class Progress:
    """How far the runner has got: prompts sent so far."""

    sent: int = 0


def message_digests(body: dict[str, Any]) -> list[bytes]:
    """One digest per message, cache markers left out."""
    digests = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else message
        if isinstance(content, list):
            content = [strip_bookkeeping(b) if isinstance(b, dict) else b for b in content]
        digests.append(digest([message.get("role") if isinstance(message, dict) else None, content]))
    return digests


def extends(previous: list[bytes], current: list[bytes]) -> bool:
    return len(current) >= len(previous) and current[: len(previous)] == previous


def request_view(body: dict[str, Any]) -> str:
    """Every string the model is shown: the system prompt and the messages."""
    return view_text([body.get("system") or [], body.get("messages") or []])


def read_paths(body: dict[str, Any]) -> set[str]:
    """The `file_path` of every tool call the request's messages hold."""
    return {
        str(block["input"]["file_path"])
        for message in body.get("messages") or []
        if isinstance(message, dict) and message.get("role") == "assistant"
        for block in content_blocks(message.get("content"))
        if block.get("type") == "tool_use" and isinstance(block.get("input"), dict) and "file_path" in block["input"]
    }


def kept_after(
    session: Session, sent: int, view: str, read: set[str] | None = None
) -> dict[str, tuple[int, int]]:
    """What the view holds of what the session said and touched in its first `sent` turns. Paths:
    the modules read so far (`read`: the paths earlier requests' tool calls named; None: every
    module of those turns, read or not)."""
    planted = [n for n, turn in zip(session.needles, NEEDLE_TURNS, strict=False) if turn <= sent]
    paths = [p for p in session.paths[:sent] if read is None or p in read]
    return {
        "users": retention(session.prompts[:sent], view),
        "paths": retention(paths, view),
        "todos": retention(session.todos if sent else (), view),
        "needles": retention(planted, view),
    }


@dataclass
class CompactionWatch:
    session: Session
    progress: Progress
    compactions: list[Compaction] = field(default_factory=list)
    rewrites: int = 0
    first: int = 0  # the first main request's context (system prompt, tools, first prompt)
    # Tokens of each tool result, counted once, the first time a main request sends it: the output
    # of the same calls, as each agent's tools shape it.
    tool_output: dict[str, int] = field(default_factory=dict)
    read: set[str] = field(default_factory=set)  # paths the tool calls of main requests so far named
    _previous: list[bytes] | None = None
    _previous_tokens: int = 0

    def results(self, body: dict[str, Any], count: Callable[[dict[str, Any]], int]) -> None:
        last = next((m for m in reversed(body.get("messages") or []) if m.get("role") == "user"), None)
        blocks = last.get("content") if isinstance(last, dict) else None
        for block in blocks if isinstance(blocks, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            key = str(block.get("tool_use_id"))
            if key not in self.tool_output:
                self.tool_output[key] = count(block)

    def main(self, body: dict[str, Any], tokens: int) -> None:
        digests = message_digests(body)
        if self._previous is None:
            self.first = tokens
        elif not extends(self._previous, digests) and tokens > SHRINK * self._previous_tokens:
            self.rewrites += 1
        elif not extends(self._previous, digests):
            kept = kept_after(self.session, self.progress.sent, request_view(body), self.read)
            self.compactions.append(Compaction(self._previous_tokens, tokens, kept))
        self._previous, self._previous_tokens = digests, tokens
        self.read |= read_paths(body)


class RowEngine(MeteredEngine):
    """The metered engine, with each request's kind as the row's policy sees it and the watch fed."""

    def __init__(self, *args: Any, client: Client, watch: CompactionWatch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.client = client
        self.watch = watch

    def kind_of(self, body: dict[str, Any]) -> Kind:
        return classify(body, self.client, self.watch.session.prompts)

    def prepare(self, body: dict[str, Any], **kwargs: Any) -> Any:
        prepared = super().prepare(body, **kwargs)
        entry = self.log[-1]
        entry.kind = self.kind_of(body)
        if entry.kind == "main" and not entry.overflow:
            self.watch.main(body, entry.total_tokens)
            self.watch.results(body, self.counter_for(prepared.spec).count_block)
        return prepared


def share(compactions: list[Compaction], measure: str) -> float | None:
    """Found / total over every compaction (None: nothing to keep)."""
    found = sum(c.kept[measure][0] for c in compactions if measure in c.kept)
    total = sum(c.kept[measure][1] for c in compactions if measure in c.kept)
    return found / total if total else None


def entry_units(entry: RequestLog, spec: ModelSpec) -> float:
    """One request's cost in units of an uncached input token, as `cost_units` prices a run."""
    usage = entry.usage or {}
    split = usage.get("cache_creation") or {}
    written = int(usage.get("cache_creation_input_tokens") or 0)
    one_hour = int(split.get("ephemeral_1h_input_tokens") or 0)
    totals = {
        "input_tokens": int(usage.get("input_tokens") or 0),
        "cache_write_5m_tokens": written - one_hour,
        "cache_write_1h_tokens": one_hour,
        "cache_read_tokens": int(usage.get("cache_read_input_tokens") or 0),
        "output_tokens": entry.output_tokens,
    }
    return cost_units(totals, spec)


PARTS = ("written", "read", "uncached", "output")


def main_parts(log: list[RequestLog], spec: ModelSpec) -> dict[str, float]:
    """The main requests' cost in units, by what it pays for: cache writes, cache reads, uncached
    input and output."""
    parts = dict.fromkeys(PARTS, 0.0)
    for entry in log:
        if entry.kind != "main":
            continue
        usage = entry.usage or {}
        written = int(usage.get("cache_creation_input_tokens") or 0)
        one_hour = int((usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0)
        parts["written"] += spec.cache_write_5m_multiplier * (written - one_hour) + spec.cache_write_1h_multiplier * one_hour
        parts["read"] += spec.cache_read_multiplier * int(usage.get("cache_read_input_tokens") or 0)
        parts["uncached"] += int(usage.get("input_tokens") or 0)
        parts["output"] += spec.output_usd_per_mtok / spec.input_usd_per_mtok * entry.output_tokens
    return parts


def cost_by_kind(log: list[RequestLog], spec: ModelSpec) -> dict[str, float]:
    costs: dict[str, float] = {}
    for entry in log:
        costs[entry.kind] = costs.get(entry.kind, 0.0) + entry_units(entry, spec)
    return costs


def kinds(log: list[RequestLog]) -> dict[str, int]:
    counted: dict[str, int] = {}
    for entry in log:
        counted[entry.kind] = counted.get(entry.kind, 0) + 1
    return counted
