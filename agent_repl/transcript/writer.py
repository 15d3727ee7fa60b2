"""Append-only JSONL transcript writer (docs/architecture.md 9.1).

One record per line, written with one unbuffered write, so a crash loses at most the line being
written (the loader skips that torn line; a writer that reopens the file starts a new line after
it). A write that fails part way (a full disk) is cut back off the file, so a full disk leaves no
torn line either, and raises `SessionWriteError` with one line to show. `append_messages` writes
several records in that one write (a compaction's boundary and summary). The writer holds the
session's lock (`SessionLock`) until it is closed. Records hold the message, the envelope the caller gave (cwd, git branch) and
`agent_repl.__version__`; nothing is read from the environment, and every line passes through the
session's `SecretRedactor` (a forked foreign history is copied through here too).

Everything writes through `TranscriptWriter.append_message` / `append_record` (and
`append_messages`), on the event loop; each call writes one whole line.

Chain links: a message whose `parent_uuid` is None is linked to the message written before it
(the first one is the root). A `compact_boundary` is written as Claude Code writes it:
`parentUuid` null and `logicalParentUuid` naming the message it continues.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import aiofiles
from aiofiles.threadpool.binary import AsyncFileIO

import agent_repl
from agent_repl.core.model.messages import Message, SystemMessage
from agent_repl.core.model.transcript_sink import SessionWriteError
from agent_repl.core.tooling.redaction import SecretRedactor
from agent_repl.transcript.convert import Envelope, message_to_record
from agent_repl.transcript.lock import SessionLock
from agent_repl.transcript.paths import FILE_MODE, SessionPaths, ensure_private_dir
from agent_repl.transcript.records import SideRecord


def encode_record(record: Mapping[str, Any]) -> str:
    """One JSONL line (with its newline), compact like Claude Code's.

    Text with lone surrogates (undecodable tool output) cannot be written as UTF-8; such a record
    falls back to ASCII escapes, which is still valid JSON and loads back unchanged.
    """
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(record, ensure_ascii=True, separators=(",", ":"))
    return line + "\n"


def _open_private(path: str | bytes, flags: int) -> int:
    return os.open(path, flags, FILE_MODE)


class TranscriptWriter:
    """Writes one session's transcript. Opens the file on the first append."""

    def __init__(
        self,
        paths: SessionPaths,
        *,
        git_branch: str = "",
        version: str = agent_repl.__version__,
        is_sidechain: bool = False,
        last_uuid: str | None = None,
        redactor: SecretRedactor | None = None,
        lock: SessionLock | None = None,
        agent_id: str | None = None,
    ) -> None:
        """`last_uuid`: when resuming, the leaf of the loaded chain, so new messages link to it.
        `agent_id`: a sub-agent's sidechain file, `<session>/subagents/agent-<id>.jsonl`."""
        self.paths = paths
        self._path = paths.subagent_transcript(agent_id) if agent_id else paths.transcript
        self.lock = lock
        self.redactor = redactor or SecretRedactor()
        self.envelope = Envelope(
            session_id=paths.session_id,
            cwd=str(paths.cwd),
            version=version,
            git_branch=git_branch,
            is_sidechain=is_sidechain or agent_id is not None,
            agent_id=agent_id,
        )
        self.last_uuid = last_uuid
        self._file: AsyncFileIO | None = None
        self._lock = asyncio.Lock()

    @property
    def path(self) -> Path:
        return self._path

    def message_record(self, msg: Message) -> dict[str, Any]:
        """The record `append_message` would write for `msg` now (chain link filled in)."""
        update: dict[str, Any] = {}
        if isinstance(msg, SystemMessage) and msg.subtype == "compact_boundary":
            update["parent_uuid"] = None
            update["logical_parent_uuid"] = msg.logical_parent_uuid or msg.parent_uuid or self.last_uuid
        elif msg.parent_uuid is None:
            update["parent_uuid"] = self.last_uuid
        if update:
            msg = msg.model_copy(update=update)
        return message_to_record(msg, self.envelope)

    def side_record(self, record: SideRecord) -> dict[str, Any]:
        data = record.to_json()
        if not data.get("sessionId"):
            data["sessionId"] = self.paths.session_id
        return data

    async def append_message(self, msg: Message) -> dict[str, Any]:
        async with self._lock:
            data = self.message_record(msg)
            await self._write(self._encode(data))
            self.last_uuid = msg.uuid
            return data

    async def append_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """Several messages in one write: after a crash, either all of them are in the file or none."""
        async with self._lock:
            previous = self.last_uuid
            records, lines = [], []
            try:
                for msg in messages:
                    records.append(self.message_record(msg))
                    lines.append(self._encode(records[-1]))
                    self.last_uuid = msg.uuid
                await self._write("".join(lines))
            except BaseException:
                self.last_uuid = previous
                raise
            return records

    async def append_record(self, record: SideRecord) -> dict[str, Any]:
        async with self._lock:
            data = self.side_record(record)
            await self._write(self._encode(data))
            return data

    async def append_history(self, messages: Iterable[Message]) -> None:
        """Copy a loaded history into this transcript (forking a Claude Code or other session).

        The copies are chained in the order given: their old `parentUuid` links may name records
        that are not copied (Claude Code's progress records), which would break the chain.
        """
        for msg in messages:
            update: dict[str, Any] = {"parent_uuid": None}
            if isinstance(msg, SystemMessage):
                update["logical_parent_uuid"] = None
            await self.append_message(msg.model_copy(update=update))

    def _encode(self, data: Mapping[str, Any]) -> str:
        return self.redactor.text(encode_record(data))

    async def close(self) -> None:
        async with self._lock:
            if self._file is not None:
                await self._file.close()
                self._file = None
            if self.lock is not None:
                self.lock.release()
                self.lock = None

    async def __aenter__(self) -> TranscriptWriter:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def _write(self, text: str) -> None:
        data = text.encode("utf-8")
        try:
            if self._file is None:
                ensure_private_dir(self.path.parent)
                torn = _ends_mid_line(self.path)
                self._file = await aiofiles.open(self.path, "ab", buffering=0, opener=_open_private)
                if torn:
                    data = b"\n" + data
            await asyncio.to_thread(_append_whole, self._file.fileno(), data)
        except OSError as exc:
            raise self._failure(exc) from exc

    def _failure(self, exc: OSError) -> SessionWriteError:
        return SessionWriteError(
            f"could not save the session to {self.path}: {exc.strerror or exc}; "
            "everything saved before is intact (free space or fix the directory, then --continue)"
        )


def _append_whole(fd: int, data: bytes) -> None:
    """Append all of `data`, or, when a write fails part way, cut what got in back off the file."""
    start = os.fstat(fd).st_size
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise


def _ends_mid_line(path: Path) -> bool:
    """Whether a crash left the file's last line unfinished; the next record must not join it."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() == 0:
                return False
            f.seek(-1, os.SEEK_END)
            return f.read(1) != b"\n"
    except OSError:
        return False
