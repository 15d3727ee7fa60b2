"""Where a session's history entries and side records go as they happen: the protocol the
transcript writer implements, an in-memory sink for tests and dry runs, and the error a sink raises
when the session can no longer be saved."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from agent_repl.core.model.messages import Message


class SessionWriteError(Exception):
    """The session could not be saved (a full disk, a read-only home); the message is one line to show.
    Nothing partial was stored: the history in memory and on disk both end before the failed entry."""


class TranscriptSink(Protocol):
    """Where history entries and side records go as they happen (the JSONL transcript)."""

    @property
    def path(self) -> Path | None:
        """The transcript file, for a sink that writes one."""
        ...

    # A sink may hand back what it stored (the writer returns the JSON records); the session ignores it.
    async def append_message(self, message: Message) -> object: ...

    async def append_messages(self, messages: Sequence[Message]) -> object:
        """Several entries stored together: all of them or none survive a crash."""
        ...

    # The side records are the transcript's own types, which the core does not name.
    async def append_record(self, record: Any) -> object: ...

    async def close(self) -> None:
        """Releases the file and the session's lock; the owner calls it when the session ends."""
        ...


class MemorySink:
    """A sink that keeps everything in memory, for tests and dry runs."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.records: list[Any] = []
        self.path: Path | None = None

    async def append_message(self, message: Message) -> None:
        self.messages.append(message)

    async def append_messages(self, messages: Sequence[Message]) -> None:
        self.messages.extend(messages)

    async def append_record(self, record: Any) -> None:
        self.records.append(record)

    async def close(self) -> None:
        """Nothing to release."""
