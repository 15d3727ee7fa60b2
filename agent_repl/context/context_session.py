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

from agent_repl.context.user_messages import is_typed
from agent_repl.core.loop.turn_session import TurnSession
from agent_repl.core.model.messages import AssistantMessage, Message, UserMessage
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

    @property
    def extracting(self) -> bool:
        """Whether an update is in flight."""
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


def history_for_reminders(session: Any) -> list[Message]:
    """The whole history as a compaction's reminders read it (the opening context, the todo list,
    the approved plan, the paths the calls named, what the user typed). The entries a resume left in
    the transcript are read one at a time and kept light: tool results without their content,
    replies with their tool calls only."""
    earlier = getattr(session, "earlier", None)
    if earlier is None:
        return session.messages
    light: list[Message] = []
    for message in earlier.stream():
        kept = message if not light else _light(message)
        if kept is not None:
            light.append(kept)
    return [*light, *session.messages]


def _light(message: Message) -> Message | None:
    if isinstance(message, AssistantMessage):
        uses = message.tool_uses()
        return message.model_copy(update={"content": uses}) if uses else None
    if not isinstance(message, UserMessage):
        return None
    if not message.is_tool_result():
        return message if is_typed(message) else None
    results = [r.model_copy(update={"content": ""}) for r in message.tool_results()]
    structured = message.tool_use_result
    if isinstance(structured, dict):
        structured = {"newTodos": structured["newTodos"]} if "newTodos" in structured else {}
    else:
        structured = None
    return message.model_copy(update={"content": results, "tool_use_result": structured})
