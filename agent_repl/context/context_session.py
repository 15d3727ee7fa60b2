"""What the context package's session-wide work needs from a session, as protocols.

Compaction, forked requests (session memory, the summary request) and `/context` take a
whole session, but the session composes this package, so they are written against
`ContextSession` (agent_repl.session.Session is one), as the loop is against `TurnSession`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Protocol

from agent_repl.core.loop.turn_session import TurnSession
from agent_repl.core.model.messages import Message
from agent_repl.core.permissions.rules import PermissionPolicy
from agent_repl.core.tooling.file_state import ReadLedger
from agent_repl.core.tooling.redaction import SecretRedactor


class SessionNotes(Protocol):
    """The notes kept of the session as it goes, which a compaction may use as its summary
    (agent_repl.context.session_memory.SessionMemory)."""

    @property
    def content(self) -> str | None: ...

    @property
    def last_summarized_uuid(self) -> str | None:
        """The newest history entry the notes cover."""
        ...

    async def wait_for_extraction(self, timeout: float | None = 60.0) -> bool:  # noqa: ASYNC109
        """Wait for an update in flight; True when none is running any more."""
        ...

    def paused(self, timeout: float = 60.0) -> AbstractAsyncContextManager[None]:
        """No update starts inside (one running is waited for first)."""
        ...

    async def aclose(self) -> None: ...


class ContextSession(TurnSession, Protocol):
    # Where tool output over its limit is written (a compaction under a byte budget shrinks into it).
    tool_results_dir: Path
    # Takes credentials out of what is kept (the session's notes too).
    redactor: SecretRedactor
    # The files the model read or wrote (a compaction keeps only what the kept tail still shows).
    files: ReadLedger
    # The rules Read is checked against: a compaction reads a file again only if they allow it.
    permissions: PermissionPolicy

    @property
    def memory(self) -> SessionNotes | None: ...

    @property
    def last_uuid(self) -> str | None: ...

    async def append_many(self, messages: Sequence[Message]) -> None: ...

    def definitions_for(self, loaded: frozenset[str]) -> list[dict[str, Any]]: ...


def whole_history(session: Any) -> list[Message]:
    """Every entry of the session: a resumed one may hold only the part since its compaction."""
    full = getattr(session, "full_history", None)
    return full() if callable(full) else session.messages


def take_back_earlier(session: Any) -> None:
    """Put the entries a resume left in the transcript back at the front of `session.messages`
    (outside a turn: a turn counts the entries it appends)."""
    earlier = getattr(session, "earlier", None)
    if earlier is not None:
        session.messages[:0] = earlier.load()
        session.earlier = None
