"""Hostile transcripts: a real transcript, damaged at random, must still load.

Hypothesis takes a transcript our writer produced (a tool turn, an API error, a compaction, side
records) and applies up to six damages: a truncated line, a value of the wrong type, a record of
an unknown type, a huge line, invalid UTF-8, a duplicated record, a `parentUuid` cycle, a junk
line, deeply nested JSON. Loading and listing must never raise or hang; every damage that loses
data is reported as a warning; every message on a line no damage touched is still loaded.
"""

from __future__ import annotations

import json
import re
import tempfile
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_repl.core.model.messages import (
    AssistantMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from agent_repl.transcript.convert import Envelope, message_to_record
from agent_repl.transcript.loader import load_session
from agent_repl.transcript.records import ContentReplacementRecord, SessionMetaRecord, SnipRecord
from agent_repl.transcript.sessions import scan_session
from agent_repl.transcript.writer import encode_record

SESSION = "5e55a0de-0000-4000-8000-0000000000aa"
# Small enough that a "huge" line is cheap to make; every base line is far below it.
MAX_LINE = 16 * 1024


@cache
def base_lines() -> tuple[bytes, ...]:
    """A realistic transcript as our writer encodes it: one record per line."""
    usage = Usage(input_tokens=10, output_tokens=20, cache_read_input_tokens=300)
    history: list[Any] = [
        UserMessage(content="<env>cwd: /p</env>", is_meta=True),
        UserMessage(content="count the lines of notes.txt"),
        SessionMetaRecord(values={"title": "Count lines", "model": "claude-sonnet-5-5"}, session_id=SESSION),
        AssistantMessage(message_id="msg_1", content=[TextBlock(text="Counting.")], usage=usage),
        AssistantMessage(
            message_id="msg_1",
            content=[ToolUseBlock(id="toolu_01A", name="Bash", input={"command": "wc -l notes.txt"})],
            stop_reason="tool_use",
            usage=usage,
        ),
        UserMessage(
            content=[ToolResultBlock(tool_use_id="toolu_01A", content="42 notes.txt")],
            tool_use_result={"stdout": "42 notes.txt", "returnCode": 0},
            source_tool_use_id="toolu_01A",
        ),
        ContentReplacementRecord(tool_use_id="toolu_01A", replacement="<persisted-output>x</persisted-output>"),
        SystemMessage(subtype="api_error", content="API error 529 (overloaded_error): Overloaded", level="error"),
        AssistantMessage(message_id="msg_2", content=[TextBlock(text="42 lines.")], stop_reason="end_turn", usage=usage),
        SnipRecord(uuids=["u-x"], source="model", tokens_freed=10),
        SystemMessage(subtype="compact_boundary", content="Conversation compacted", metadata={"trigger": "auto"}),
        UserMessage(content="Summary of the earlier conversation.", is_compact_summary=True),
        UserMessage(content="and the longest line?"),
        AssistantMessage(message_id="msg_3", content=[TextBlock(text="Line 7.")], stop_reason="end_turn", usage=usage),
    ]
    envelope = Envelope(session_id=SESSION, cwd="/p", version="0.1.0")
    lines: list[bytes] = []
    previous: str | None = None
    for item in history:
        if isinstance(item, UserMessage | AssistantMessage | SystemMessage):
            item.uuid = f"uuid-{len(lines):02d}"
            if isinstance(item, SystemMessage) and item.subtype == "compact_boundary":
                item.logical_parent_uuid = previous
            else:
                item.parent_uuid = previous
            item.session_id = SESSION
            record = message_to_record(item, envelope)
            previous = item.uuid
        else:
            record = item.to_json()
        lines.append(encode_record(record).encode())
    return tuple(lines)


def message_uuid(line: bytes) -> str | None:
    """The uuid of a message record on `line`, decoded as the loader decodes it."""
    try:
        record = json.loads(line.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or record.get("type") not in ("user", "assistant", "system"):
        return None
    uuid = record.get("uuid")
    return uuid if isinstance(uuid, str) else None


def uuids_named(line: bytes) -> set[str]:
    """Every uuid a line may name, parsed or not (a truncated line may still show it)."""
    text = line.decode("utf-8", errors="replace")
    found = set(re.findall(r'"uuid":\s*"([^"]*)"', text))
    parsed = message_uuid(line)
    return found | ({parsed} if parsed else set())


WRONG_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=3),
)
INVALID_UTF8 = [b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf0\x28\x8c\x28", b"\x80\x80"]


@dataclass
class Damage:
    """The damaged file and what the checks need to know about it."""

    lines: list[bytes] = field(repr=False)
    ops: list[str] = field(default_factory=list)
    must_warn: list[str] = field(default_factory=list)


@st.composite
def damaged(draw: st.DrawFn) -> Damage:
    base = list(base_lines())
    damage = Damage(lines=list(base))
    lines = damage.lines
    n_ops = draw(st.integers(min_value=1, max_value=6))
    for _ in range(n_ops):
        kind = draw(
            st.sampled_from(
                ["truncate", "wrong_type", "unknown_type", "huge", "invalid_utf8", "duplicate", "cycle", "junk", "deep"]
            )
        )
        i = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        damage.ops.append(f"{kind}@{i}")
        uuid = message_uuid(lines[i])
        if kind == "truncate":
            body = lines[i].rstrip(b"\n")
            if len(body) < 2:
                continue
            cut = draw(st.integers(min_value=1, max_value=len(body) - 1))
            last = i == len(lines) - 1 and draw(st.booleans())
            # The last line may lose its newline too: a write cut off by a crash.
            lines[i] = body[:cut] + (b"" if last else b"\n")
            damage.must_warn.append(kind)
        elif kind == "wrong_type":
            try:
                record = json.loads(lines[i])
            except (ValueError, RecursionError):
                continue
            if not isinstance(record, dict) or not record:
                continue
            key = draw(st.sampled_from(sorted(record)))
            target = record
            if key == "message" and isinstance(record[key], dict) and record[key] and draw(st.booleans()):
                target = record[key]
                key = draw(st.sampled_from(sorted(target)))
            old = target[key]
            # Of another JSON type than the value it replaces; a parentUuid is a string or null, so
            # neither of those is a wrong type for it (null makes a root, "" too).
            link = key in ("parentUuid", "logicalParentUuid")
            target[key] = draw(
                WRONG_VALUES.filter(
                    lambda v, old=old, link=link: v is not None
                    and type(v) is not type(old)
                    and not (link and isinstance(v, str))
                )
            )
            lines[i] = encode_record(record).encode()
            if target is record and uuid is not None and key in ("type", "uuid", "message", "parentUuid"):
                damage.must_warn.append(f"{kind}:{key}")  # a message record lost its identity or link
        elif kind == "unknown_type":
            record = {
                "type": draw(st.text(min_size=1, max_size=12)),
                "uuid": f"unknown-{i}-{len(lines)}",
                "parentUuid": draw(st.none() | st.sampled_from([f"uuid-{k:02d}" for k in range(len(base))])),
                "payload": draw(WRONG_VALUES),
            }
            lines.insert(i, encode_record(record).encode())
        elif kind == "huge":
            size = draw(st.integers(min_value=MAX_LINE + 1, max_value=4 * MAX_LINE))
            filler = json.dumps({"type": "user", "uuid": f"huge-{i}", "message": {"content": "x" * size}})
            ended = draw(st.booleans()) or i < len(lines) - 1
            lines.insert(i, filler.encode() + (b"\n" if ended else b""))
            damage.must_warn.append(kind)
        elif kind == "invalid_utf8":
            body = lines[i].rstrip(b"\n")
            at = draw(st.integers(min_value=0, max_value=len(body)))
            lines[i] = body[:at] + draw(st.sampled_from(INVALID_UTF8)) + body[at:] + b"\n"
            damage.must_warn.append(kind)
        elif kind == "duplicate":
            if uuid is None:
                continue
            # A copy written again later (a copy written before the original would make the original
            # the duplicate; the first occurrence is the one kept, so that is a different record).
            j = draw(st.integers(min_value=i + 1, max_value=len(lines)))
            lines.insert(j, lines[i] if lines[i].endswith(b"\n") else lines[i] + b"\n")
            damage.must_warn.append(kind)
        elif kind == "cycle":
            # A link to this record or a later one (by first appearance) closes a loop.
            firsts = [message_uuid(line) for line in lines]
            later = [k for k in range(i, len(lines)) if firsts[k] and firsts[k] not in firsts[:i]]
            if uuid is None or not later:
                continue
            record = json.loads(lines[i].decode("utf-8", errors="replace"))
            record["parentUuid"] = message_uuid(lines[draw(st.sampled_from(later))])
            record.pop("logicalParentUuid", None)
            lines[i] = encode_record(record).encode()
        elif kind == "junk":
            junk = draw(st.binary(max_size=40)).replace(b"\n", b" ")
            lines.insert(i, junk + b"\n")
        elif kind == "deep":
            depth = draw(st.sampled_from([50, 900, 5_000, 100_000]))
            nested = "[" * depth + "]" * depth
            record = f'{{"type":"user","uuid":"deep-{i}","message":{{"content":{nested}}}}}'
            lines.insert(i, record.encode() + b"\n")
    # A line that ends without a newline can only be the last one; later damage may have moved it.
    damage.lines = [
        line if line.endswith(b"\n") or k == len(lines) - 1 else line + b"\n" for k, line in enumerate(lines)
    ]
    return damage


def check(damage: Damage) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{SESSION}.jsonl"
        path.write_bytes(b"".join(damage.lines))
        loaded = load_session(path, max_line_bytes=MAX_LINE)
        info = scan_session(path)
    assert isinstance(info.message_count, int)
    if damage.must_warn:
        assert loaded.warnings, f"no warning for {damage.must_warn}"
    kept = {m.uuid for m in loaded.messages}
    # A message is untouched when its line is exactly as the writer wrote it and no damaged line
    # (which may still be read, or may hold the first copy of its uuid) names the same uuid.
    base = set(base_lines())
    damaged_uuids = {u for line in damage.lines if line not in base for u in uuids_named(line)}
    untouched = {
        u for line in damage.lines if line in base and (u := message_uuid(line)) and u not in damaged_uuids
    }
    lost = untouched - kept
    assert not lost, f"untouched messages lost: {sorted(lost)}; warnings: {loaded.warnings}; {damage.ops}"
    # Each uuid is in the history once.
    assert len(kept) == len(loaded.messages)


@pytest.mark.timeout(3600)
def test_damaged_transcripts_load_what_is_left_and_report_the_damage(size, figures):
    examples = size(300, 10_000)
    counted = {"cases": 0, "with_warnings_expected": 0}

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(damaged())
    def run(damage: Damage) -> None:
        counted["cases"] += 1
        counted["with_warnings_expected"] += bool(damage.must_warn)
        check(damage)

    run()
    figures.update(cases=counted["cases"], cases_that_must_warn=counted["with_warnings_expected"])


def test_the_undamaged_base_loads_cleanly():
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        path.write_bytes(b"".join(base_lines()))
        loaded = load_session(path)
    assert loaded.warnings == []
    assert len(loaded.messages) == sum(message_uuid(line) is not None for line in base_lines())


T = TypeVar("T")


def with_huge_line(path: Path, size: int) -> Path:
    """A short transcript whose middle record holds `size` bytes of text on one line."""
    with path.open("wb") as f:
        f.write(base_lines()[1])
        f.write(b'{"type":"user","uuid":"big","message":{"content":"' + b"x" * size + b'"}}\n')
        f.write(base_lines()[3])
    return path


def peak_memory(work: Callable[[], T]) -> tuple[T, int]:
    """What `work` returns and the most memory Python held while it ran."""
    tracemalloc.start()
    try:
        result = work()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def test_listing_a_transcript_with_a_huge_line_keeps_memory_bounded(tmp_path):
    # Listing (`--continue`, the /resume picker) scans every transcript of the project.
    path = with_huge_line(tmp_path / f"{SESSION}.jsonl", 48 * 1024 * 1024)
    info, peak = peak_memory(lambda: scan_session(path))
    assert info.message_count == 3 and info.first_prompt == "count the lines of notes.txt"
    assert peak < 8 * 1024 * 1024, f"listing held {peak / 2**20:.0f} MB for one line"


def test_loading_a_transcript_with_a_line_over_the_cap_skips_it_in_bounded_memory(tmp_path):
    path = with_huge_line(tmp_path / f"{SESSION}.jsonl", 24 * 1024 * 1024)
    loaded, peak = peak_memory(lambda: load_session(path, max_line_bytes=1024 * 1024))
    assert [w for w in loaded.warnings if "longer than" in w]
    assert [m.uuid for m in loaded.messages] == ["uuid-01", "uuid-03"]
    assert peak < 8 * 1024 * 1024
