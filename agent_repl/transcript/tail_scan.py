"""Where a resume of our own transcript may start reading (docs/architecture.md 9.2).

The model sees the last active compact boundary onward, plus the tail that boundary kept from
before it. A resume therefore builds entries from a cut point only: the active boundary before
the last one (the kept tail lives between the two), or earlier when the kept tail reaches back
further. Everything before the cut is passed over as bytes: an entry line of our writer starts
with its envelope (`{"parentUuid":`), so its uuid, type and reply id are read from the line's
start without decoding the line; the other lines (our side records, file-history snapshots) are
small and parsed, since the pipeline's state is rebuilt from all of them.

A quoted key such as `"subtype":"compact_boundary"` can only appear unescaped at the structure
level of a line (inside a JSON string every quote is escaped), and each candidate line is parsed
to confirm it. A file with any entry line not in our envelope's shape is not scanned: the caller
loads it whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import agent_repl
from agent_repl.core.model.messages import Message
from agent_repl.core.model.todos import TODO_TOOL
from agent_repl.transcript.convert import record_to_message

_ENTRY_START = b'{"parentUuid":'
_HEAD_BYTES = 4096
# Our writer puts the entry's type and uuid side by side in its envelope.
_ENVELOPE = re.compile(rb'"type":"(user|assistant|system|attachment)","uuid":"([^"\\]+)"')
_REPLY_ID = re.compile(rb'"message":\{"id":"([^"\\]+)"')
_BOUNDARY = b'"subtype":"compact_boundary"'
_SYNTHETIC = b'"model":"<synthetic>"'
_USAGE = b'"usage":{'
_TODO_CALL = b'"name":"TodoWrite"'
# A reply's usage is written after its content, near the end of its line.
_TAIL_BYTES = 4096
_ENTRY_TYPES = frozenset({"user", "assistant", "system", "attachment"})


class NotOurs(Exception):
    """The file holds entry lines our writer does not write; it must be loaded whole."""


@dataclass
class _Boundary:
    offset: int
    line: int
    uuid: str
    # Entries before the boundary its view keeps (`keptFromUuid`, Claude Code's preserved uuids).
    kept: list[str]


@dataclass
class EarlierScan:
    """What lies before the cut: counted and indexed, never built into entries."""

    # Byte offset and line number (1-based) of the first line to build.
    cut: int = 0
    first_line: int = 1
    # Entry lines before the cut.
    entries: int = 0
    entry_uuids: set[str] = field(default_factory=set)
    # Ids of the model's replies before the cut that carried usage (one reply spans several entries).
    reply_ids: set[str] = field(default_factory=set)
    # Every non-entry line before the cut, decoded, with its line number, in file order.
    side_lines: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    # Where the last TodoWrite call before the cut starts (the todo list goes on from it), if any.
    todo_from: int | None = None
    # Lines before the cut that could not be decoded: (line number, text for the warning).
    damaged: list[tuple[int, str]] = field(default_factory=list)


_CHUNK = 8 * 1024 * 1024


def _lines(
    path: Path, max_line_bytes: int, start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, int, bytearray, int, int]]:
    """(offset, line number, buffer, start, end) for every line from byte `start` up to `stop`:
    the line is `buffer[start:end]` (valid until the next line is asked for), or end is -1 when it
    is longer than `max_line_bytes`. Reads into one reused buffer; a line is not copied. Line
    numbers count from `start`."""
    buf = bytearray(_CHUNK)
    filled, base, number = 0, start, 0
    left = stop - start if stop is not None else -1
    with open(path, "rb") as f:
        f.seek(start)
        while True:
            if filled == len(buf):  # one line fills the buffer: make room, or pass over it
                if len(buf) > max_line_bytes:
                    number += 1
                    yield base, number, buf, 0, -1
                    base, left = _skip_line(f, left)
                    filled = 0
                    continue
                buf.extend(bytes(len(buf)))
            end = len(buf) if left < 0 else filled + min(left, len(buf) - filled)
            with memoryview(buf) as view, view[filled:end] as room:
                read = f.readinto(room)
            if left >= 0:
                left -= read
            filled += read
            pos = 0
            while (newline := buf.find(b"\n", pos, filled)) >= 0:
                number += 1
                yield base + pos, number, buf, pos, newline + 1 if newline + 1 - pos <= max_line_bytes else -1
                pos = newline + 1
            if not read:
                if pos < filled:
                    yield base + pos, number + 1, buf, pos, filled if filled - pos <= max_line_bytes else -1
                return
            buf[: filled - pos] = buf[pos:filled]
            base, filled = base + pos, filled - pos


def _skip_line(f: BinaryIO, left: int) -> tuple[int, int]:
    """Read past the rest of a line too long to keep: (offset of the next line, bytes left to read)."""
    while True:
        at = f.tell()
        chunk = f.read(_CHUNK if left < 0 else min(_CHUNK, left))
        newline = chunk.find(b"\n")
        if newline >= 0:
            f.seek(at + newline + 1)
            return at + newline + 1, left if left < 0 else left - newline - 1
        if not chunk:
            return at, left
        if left >= 0:
            left -= len(chunk)


def scan_earlier(path: Path, max_line_bytes: int) -> EarlierScan:
    """Find the cut in one pass over the file. Raises NotOurs, or OSError when it cannot be read."""
    offsets: dict[str, int] = {}  # entry uuid -> offset
    boundaries: list[_Boundary] = []
    undone: set[str] = set()
    replies: list[tuple[int, bytes]] = []
    todo_calls: list[int] = []
    sides: list[tuple[int, int, dict[str, Any]]] = []
    damaged: list[tuple[int, int, str]] = []
    for offset, number, buf, start, end in _lines(path, max_line_bytes):
        if end < 0:
            damaged.append((offset, number, f"longer than {max_line_bytes} bytes, skipped"))
            continue
        if buf.startswith(_ENTRY_START, start):
            head_end = min(end, start + _HEAD_BYTES)
            envelope = _ENVELOPE.search(buf, start, head_end)
            if envelope is None:
                raise NotOurs(f"line {number}: an entry without our envelope")
            kind = envelope.group(1)
            offsets.setdefault(envelope.group(2).decode("utf-8", "replace"), offset)
            if kind == b"system" and buf.find(_BOUNDARY, start, end) >= 0:
                boundary = _boundary(buf[start:end], offset, number)
                if boundary is not None:
                    boundaries.append(boundary)
            elif kind == b"assistant":
                if buf.find(_USAGE, max(start, end - _TAIL_BYTES), end) >= 0:
                    reply = _REPLY_ID.search(buf, start, head_end)
                    if reply is not None and buf.find(_SYNTHETIC, start, head_end) < 0:
                        replies.append((offset, reply.group(1)))
                if buf.find(_TODO_CALL, start, end) >= 0:
                    todo_calls.append(offset)
            continue
        raw = buf[start:end]
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            damaged.append((offset, number, f"malformed JSON, skipped ({str(exc)[:80]})"))
            continue
        if not isinstance(record, dict):
            damaged.append((offset, number, f"not a JSON object ({type(record).__name__}), skipped"))
            continue
        if record.get("type") in _ENTRY_TYPES:
            raise NotOurs(f"line {number}: an entry without our envelope")
        if record.get("type") == "compaction-undo":
            undone.add(str(record.get("boundaryUuid")))
        sides.append((offset, number, record))
    first = _cut([b for b in boundaries if b.uuid not in undone], offsets)
    cut, first_line = (first.offset, first.line) if first is not None else (0, 1)
    before = {u for u, at in offsets.items() if at < cut}
    return EarlierScan(
        cut=cut,
        first_line=first_line,
        entries=len(before),
        entry_uuids=before,
        reply_ids={r.decode("utf-8", "replace") for o, r in replies if o < cut},
        side_lines=[(n, record) for o, n, record in sides if o < cut],
        todo_from=max((o for o in todo_calls if o < cut), default=None),
        damaged=[(n, text) for o, n, text in damaged if o < cut],
    )


@dataclass
class EarlierHistory:
    """The entries of a transcript before the part a resume built, read from the file on demand."""

    path: Path
    # How many entries, and how many of the model's replies with usage, lie before the cut.
    entries: int
    replies: int
    # The first entry that was built: everything before it in the whole history is earlier.
    first_built: str | None
    # Byte offsets: where the last TodoWrite call before the cut starts (if any), and the cut.
    todo_from: int | None = None
    cut: int = 0

    def todo_entries(self) -> list[Message]:
        """What set the todo list as it stood at the cut: the last TodoWrite call before it and the
        entries after the call that name its tool_use ids (its result). The other lines are passed
        over as bytes; they cannot change the list."""
        if self.todo_from is None:
            return []
        wanted = [_TODO_CALL]
        found: list[Message] = []
        for _, _, buf, begin, end in _lines(self.path, 1 << 62, self.todo_from, self.cut):
            named = any(buf.find(w, begin, end) >= 0 for w in wanted)
            if not named or not buf.startswith(_ENTRY_START, begin):
                continue
            message = _entry(buf[begin:end])
            if message is None:
                continue
            found.append(message)
            if message.type == "assistant":
                ids = [b.id for b in message.content if b.type == "tool_use" and b.name == TODO_TOOL]
                wanted += [json.dumps({"tool_use_id": i}, separators=(",", ":"))[1:-1].encode() for i in ids]
        return found

    def stream(self, start: int = 0) -> Iterator[tuple[Message, bool]]:
        """Each entry before the cut (from byte `start`) in file order, one at a time, with whether
        this version of our writer wrote it; unreadable lines are passed over (`load` reports them)."""
        for _, _, buf, begin, end in _lines(self.path, 1 << 62, start, self.cut):
            if not buf.startswith(_ENTRY_START, begin):
                continue
            try:
                record = json.loads(buf[begin:end])
                message = record_to_message(record) if isinstance(record, dict) else None
            except (ValueError, TypeError, RecursionError):
                continue
            if message is not None:
                yield message, record.get("version") == agent_repl.__version__


def _entry(raw: bytes | bytearray) -> Message | None:
    """The entry a line holds, or None when it cannot be read."""
    try:
        record = json.loads(raw)
        return record_to_message(record) if isinstance(record, dict) else None
    except (ValueError, TypeError, RecursionError):
        return None


def _boundary(raw: bytes | bytearray, offset: int, line: int) -> _Boundary | None:
    try:
        record = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or record.get("subtype") != "compact_boundary" or not isinstance(record.get("uuid"), str):
        return None
    metadata = record.get("compactMetadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    kept: list[str] = []
    if isinstance(metadata.get("keptFromUuid"), str):
        kept.append(metadata["keptFromUuid"])
    preserved = metadata.get("preservedMessages")
    if isinstance(preserved, dict) and isinstance(preserved.get("uuids"), list):
        kept += [u for u in preserved["uuids"] if isinstance(u, str)]
    segment = metadata.get("preservedSegment")
    if isinstance(segment, dict):
        kept += [u for u in (segment.get("headUuid"), segment.get("tailUuid")) if isinstance(u, str)]
    return _Boundary(offset, line, record["uuid"], kept)


def _cut(active: list[_Boundary], offsets: dict[str, int]) -> _Boundary | None:
    """The boundary to start building at: the active one before the last, whose entries hold the
    last one's kept tail; when that tail is not there, the view before it is needed too, and so on.
    None: build from the start."""
    index = len(active) - 1
    while index > 0:
        floor, boundary = active[index - 1], active[index]
        if all(u in offsets and floor.offset <= offsets[u] < boundary.offset for u in boundary.kept):
            return floor
        index -= 1
    return None
