"""The sessions of a project, newest first, for `--continue`, `--resume` and a `/resume` picker.

Listing is a scan, not a load: each line is parsed only when it is small; for a long line
(a multi-MB tool result or progress record) the record type is read from its first bytes.
The first prompt is taken from the first qualifying user record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from agent_repl.transcript.paths import is_valid_session_id
from agent_repl.transcript.records import MESSAGE_RECORD_TYPES

PROMPT_PREVIEW_CHARS = 200
# Lines up to this size are parsed; longer ones are classified from their head.
_PARSE_LIMIT = 64 * 1024
_HEAD_BYTES = 4096
_TYPE_IN_HEAD = re.compile(rb'"type"\s*:\s*"([A-Za-z_-]+)"')
_SIDECHAIN = re.compile(rb'"isSidechain"\s*:\s*true')
_TIMESTAMP = re.compile(rb'"timestamp"\s*:\s*"([^"]{10,40})"')
# The envelope our writer starts each entry with, before its payload (a quoted key cannot occur
# unescaped inside a string).
_OUR_ENVELOPE = re.compile(
    rb'^\{"parentUuid":(?:null|"[^"\\]*"),"isSidechain":(true|false),(?:(?!"message":).)*?'
    rb'"type":"(user|assistant|system|attachment)","uuid":"[^"\\]*","timestamp":"([^"\\]{10,40})"',
    re.S,
)
# Text Claude Code records as a user message but nobody typed.
_NOT_A_PROMPT = ("<local-command-", "Caveat:")
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)


@dataclass(frozen=True)
class SessionInfo:
    session_id: str
    path: Path
    first_prompt: str | None
    # The newest timestamp of a message record (side records such as titles do not count).
    last_activity: datetime | None
    message_count: int
    size_bytes: int
    title: str | None = None


def list_sessions(project: Path) -> list[SessionInfo]:
    """Every `<session_id>.jsonl` in a project directory, most recently active first."""
    if not project.is_dir():
        return []
    infos = [
        scan_session(path)
        for path in project.glob("*.jsonl")
        if path.is_file() and not path.name.startswith("agent-")  # old-layout subagent files
    ]
    epoch = datetime.fromtimestamp(0, UTC)
    return sorted(
        infos,
        key=lambda i: (i.last_activity or _mtime(i.path) or epoch, i.session_id),
        reverse=True,
    )


def message_count(messages: Iterable[Any]) -> int:
    """What the session list counts as a session's messages: its user and assistant entries."""
    return sum(1 for m in messages if getattr(m, "type", None) in ("user", "assistant"))


class SessionLookupError(LookupError):
    """No session, or more than one, answers to an id prefix."""


def session_by_id(project: Path, ref: str) -> Path:
    """The transcript of a session of this project named by its whole id or any unique prefix of it
    (the 8 characters the screen shows, say)."""
    if not is_valid_session_id(ref):
        raise SessionLookupError(f"{ref!r} is not a session id")
    exact = project / f"{ref}.jsonl"
    if exact.is_file():
        return exact
    matches = sorted(p for p in project.glob(f"{ref}*.jsonl") if p.is_file()) if project.is_dir() else []
    if not matches:
        raise SessionLookupError(f"no session {ref!r} in this project")
    if len(matches) > 1:
        names = ", ".join(p.stem for p in matches[:5]) + (" …" if len(matches) > 5 else "")
        raise SessionLookupError(f"{ref!r} matches {len(matches)} sessions ({names}); give more of the id")
    return matches[0]


def scan_session(path: Path) -> SessionInfo:
    first_prompt: str | None = None
    last_activity: datetime | None = None
    count = 0
    title: str | None = None
    session_id = ""
    with open(path, "rb") as f:
        for raw in _bounded_lines(f):
            ours = _OUR_ENVELOPE.search(raw, 0, _HEAD_BYTES) if first_prompt is not None else None
            if ours is not None:
                # Our writer's entry, its first prompt already found: the envelope says the rest.
                if ours.group(2) in (b"user", b"assistant") and ours.group(1) == b"false":
                    count += 1
                if ours.group(2) != b"attachment":
                    stamp = _parse_time(ours.group(3).decode(errors="replace"))
                    if stamp is not None and (last_activity is None or stamp > last_activity):
                        last_activity = stamp
                continue
            record_type, record = _classify(raw)
            if record_type in ("user", "assistant") and not _is_sidechain(raw, record):
                count += 1
            if record_type in MESSAGE_RECORD_TYPES:
                stamp = _timestamp(raw, record)
                if stamp is not None and (last_activity is None or stamp > last_activity):
                    last_activity = stamp
            if record is None:
                continue
            session_id = session_id or _str(record.get("sessionId"))
            if first_prompt is None and record_type == "user":
                first_prompt = _prompt_text(record)
            if record_type == "session-meta" and isinstance(record.get("values"), dict):
                title = _str(record["values"].get("title")) or title
            elif record_type in ("custom-title", "ai-title"):
                title = _str(record.get("customTitle") or record.get("aiTitle")) or title
    return SessionInfo(
        session_id=session_id or path.stem,
        path=path,
        first_prompt=first_prompt,
        last_activity=last_activity,
        message_count=count,
        size_bytes=path.stat().st_size,
        title=title,
    )


def _bounded_lines(f: BinaryIO) -> Iterator[bytes]:
    """Each line whole when it is small enough to parse, else its head and tail only, so a huge
    line costs no more memory than a small one."""
    while raw := f.readline(_PARSE_LIMIT + 1):
        if len(raw) > _PARSE_LIMIT and not raw.endswith(b"\n"):
            tail = raw[-_HEAD_BYTES:]
            while chunk := f.readline(1024 * 1024):
                tail = (tail + chunk)[-_HEAD_BYTES:]
                if chunk.endswith(b"\n"):
                    break
            raw = raw + tail
        yield raw


def _classify(raw: bytes) -> tuple[str | None, dict[str, Any] | None]:
    """(record type, parsed record or None when the line was too long to parse or malformed)."""
    if len(raw) <= _PARSE_LIMIT:
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            return None, None
        if not isinstance(record, dict):
            return None, None
        return _str(record.get("type")) or None, record
    # Envelope keys come before the payload, so the first "type" in the head is the record's,
    # except in an assistant record, where Claude Code writes `message` (type "message") first.
    match = _TYPE_IN_HEAD.search(raw[:_HEAD_BYTES])
    if match is None:
        return None, None
    found = match.group(1).decode()
    return ("assistant" if found == "message" else found), None


def _is_sidechain(raw: bytes, record: dict[str, Any] | None) -> bool:
    if record is not None:
        return record.get("isSidechain") is True
    return (
        _SIDECHAIN.search(raw[:_HEAD_BYTES]) is not None or _SIDECHAIN.search(raw[-_HEAD_BYTES:]) is not None
    )


def _timestamp(raw: bytes, record: dict[str, Any] | None) -> datetime | None:
    if record is not None:
        value = record.get("timestamp")
        return _parse_time(value) if isinstance(value, str) else None
    match = _TIMESTAMP.search(raw[-_HEAD_BYTES:]) or _TIMESTAMP.search(raw[:_HEAD_BYTES])
    return _parse_time(match.group(1).decode(errors="replace")) if match else None


def _parse_time(value: str) -> datetime | None:
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def _prompt_text(record: dict[str, Any]) -> str | None:
    """The text a person typed, or None for meta, compact-summary and tool-result records."""
    if record.get("isMeta") or record.get("isCompactSummary") or record.get("isSidechain"):
        return None
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        content = "".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    if not isinstance(content, str):
        return None
    name = _COMMAND_NAME.search(content)
    if name is not None:
        # A slash command is stored as XML; show it as it was typed.
        args = _COMMAND_ARGS.search(content)
        content = f"{name.group(1)} {args.group(1) if args else ''}"
    text = " ".join(content.split())
    if not text or text.startswith(_NOT_A_PROMPT):
        return None
    return text[:PROMPT_PREVIEW_CHARS]


def _mtime(path: Path) -> datetime | None:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except OSError:
        return None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""
