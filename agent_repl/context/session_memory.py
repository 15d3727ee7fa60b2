"""Session memory and the kept tail of a session-memory compaction (docs/architecture.md 5.9, 5.6).

As the conversation grows, a forked request (which reads the main conversation's cached prefix)
asks the model to write down the session's durable facts. The notes go to
`<session_dir>/memory.md` and into the transcript as a `session-memory` record, which is all a
resume needs. The extraction runs as a background task after a turn: it never delays the turn,
never runs twice at once, and never runs while the compactor has it paused.

Session-memory compaction uses the notes as its summary and keeps the messages after the last
one they cover, plus enough recent history before it (`select_kept_tail`).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_repl.context.estimate import estimate_message
from agent_repl.context.rounds import index_of
from agent_repl.context.state import PipelineState
from agent_repl.core.api.failures import CUT_OFF_STOP_REASONS
from agent_repl.core.model.messages import AssistantMessage, Message, SystemMessage, TextBlock, UserMessage
from agent_repl.transcript.paths import FILE_MODE, ensure_private_dir
from agent_repl.transcript.records import SessionMemoryRecord

if TYPE_CHECKING:
    from agent_repl.context.context_session import ContextSession

logger = logging.getLogger(__name__)

MEMORY_FILE_NAME = "memory.md"
MEMORY_MAX_TOKENS = 16_000
KEPT_TAIL_MIN_TOKENS = 10_000
KEPT_TAIL_MIN_MESSAGES = 5
KEPT_TAIL_MAX_TOKENS = 40_000


# Where the notes are made, as a share of the autocompact point: late enough that they are made
# once per compaction, early enough that they exist (and are done) when it comes.
FIRST_EXTRACTION_SHARE = 0.9


def extraction_thresholds(autocompact_at: int) -> tuple[int, int]:
    """(the size an extraction waits for, the growth it needs since the last one) in tokens.

    The notes only serve session-memory compaction, which uses them instead of a summary request:
    they are made once, shortly before the compaction point, and again only after the view has
    grown by a quarter of that point since (which, below the point, only a compaction allows), so
    each compaction is paid for once and a session that never nears the window pays for none."""
    return max(1_000, int(autocompact_at * FIRST_EXTRACTION_SHARE)), max(1_000, autocompact_at // 4)


def uncovered_limit(autocompact_at: int) -> int:
    """The most the messages after the notes may hold for a compaction to use the notes: they are
    kept verbatim, so older notes would leave a view too big to be worth it."""
    return autocompact_at // 4


def uncovered(view: list[Message], last_summarized_uuid: str) -> list[Message] | None:
    """The entries after the last one the notes cover; None when the view no longer holds it."""
    covered = next((i for i in range(len(view) - 1, -1, -1) if view[i].uuid == last_summarized_uuid), None)
    return None if covered is None else view[covered + 1 :]


def has_reply(entries: list[Message]) -> bool:
    """Whether a model reply is among `entries` (none: the notes cover every finished turn)."""
    return any(isinstance(m, AssistantMessage) for m in entries)


class MemoryExtractionError(Exception):
    """The model's reply could not be used as the session's notes."""


def write_private_file(path: Path, text: str) -> None:
    """Replace `path` with `text` in one step: mode 0600 in a 0700 directory."""
    ensure_private_dir(path.parent)
    temporary = path.with_name(f".{path.name}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, FILE_MODE)  # the umask may have narrowed the mode given to open
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


class SessionMemory:
    """The session's notes, and the background extraction that keeps them up to date."""

    def __init__(
        self,
        memory_path: Path,
        *,
        first_after_tokens: int = 10_000,
        every_tokens: int = 20_000,
        max_tokens: int = MEMORY_MAX_TOKENS,
    ) -> None:
        self.path = memory_path
        self.first_after_tokens = first_after_tokens
        self.every_tokens = every_tokens
        self.max_tokens = max_tokens
        self.last_error: str | None = None
        self.extractions = 0
        self._content: str | None = None
        self._last_summarized_uuid: str | None = None
        self._tokens_at_extraction: int | None = None
        # The size growth is measured from: the last extraction's (or failed attempt's), lowered
        # when the conversation shrinks (a compaction or a snip).
        self._baseline = 0
        self._task: asyncio.Task[None] | None = None
        self._pauses = 0

    @property
    def content(self) -> str | None:
        return self._content

    @property
    def last_summarized_uuid(self) -> str | None:
        return self._last_summarized_uuid

    @property
    def tokens_at_extraction(self) -> int | None:
        return self._tokens_at_extraction

    @property
    def extracting(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def is_paused(self) -> bool:
        return self._pauses > 0

    def due(self, tokens: int) -> bool:
        """Whether a conversation of `tokens` is big enough for notes and, after an extraction (or a
        failed attempt), has grown enough since (measured from the smallest size seen after it)."""
        if tokens < self.first_after_tokens:
            return False
        if self._tokens_at_extraction is None and self._baseline == 0:
            return True
        return tokens - self._baseline >= self.every_tokens

    def maybe_start(self, session: ContextSession, tokens: int | None = None) -> None:
        """An after-turn hook: start an extraction in the background when the conversation has grown
        enough. `tokens`: the next request's estimate the turn ended with; without it, a dry run measures."""
        if self.extracting or self.is_paused:
            return
        if tokens is None:
            try:
                projection = session.projector.project(session.messages, dry_run=True)
            except Exception as exc:  # runs inside the turn: never raise into the loop
                self.last_error = f"{type(exc).__name__}: {exc}"
                logger.warning("session memory: cannot measure the conversation: %s", self.last_error)
                return
            if not projection.view:
                return
            tokens = projection.estimated_tokens
        elif tokens <= 0:
            return
        self._baseline = min(self._baseline, tokens)
        if not self.due(tokens):
            return
        self._task = asyncio.get_running_loop().create_task(self._extract(session), name="session-memory")

    async def _extract(self, session: ContextSession) -> None:
        # The forked request's machinery is imported with the first extraction, not with every session.
        from agent_repl.context.compact_prompt import extract_summary, memory_request
        from agent_repl.context.fork import fork_request

        tokens = self._baseline
        try:
            # The fork sends this very view: the notes cover what it held.
            projection = session.projector.project(session.messages, dry_run=True)
            tokens = projection.estimated_tokens
            last_uuid = projection.view[-1].uuid
            response = await fork_request(session, memory_request(), max_tokens=self.max_tokens, projection=projection)
            if response.stop_reason in CUT_OFF_STOP_REASONS:
                # Cut-off notes would drop what they had not reached (the later user messages).
                raise MemoryExtractionError(f"the notes were cut off ({response.stop_reason})")
            reply = "".join(b.text for b in response.content if isinstance(b, TextBlock))
            content = session.redactor.text(extract_summary(reply))  # the notes go to a file and the transcript
            if not content:
                raise MemoryExtractionError("the reply held no notes")
            await asyncio.to_thread(write_private_file, self.path, content + "\n")
            record = SessionMemoryRecord(content=content, last_summarized_uuid=last_uuid, tokens_at_extraction=tokens)
            await session.append_record(record)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # background work: keep the error, never raise into the loop
            self.last_error = f"{type(exc).__name__}: {exc}"
            # Try again only after the conversation has grown by another step.
            self._baseline = tokens
            logger.warning("session memory extraction failed: %s", self.last_error)
            return
        self._apply(record)
        self.extractions += 1
        self.last_error = None

    def record(self) -> SessionMemoryRecord | None:
        """The current notes as a transcript record (None before the first extraction)."""
        if self._content is None or self._last_summarized_uuid is None or self._tokens_at_extraction is None:
            return None
        return SessionMemoryRecord(
            content=self._content,
            last_summarized_uuid=self._last_summarized_uuid,
            tokens_at_extraction=self._tokens_at_extraction,
        )

    def _apply(self, record: SessionMemoryRecord) -> None:
        """The notes' state changes by their record alone, live and on resume."""
        self._content = record.content
        self._last_summarized_uuid = record.last_summarized_uuid
        self._tokens_at_extraction = self._baseline = record.tokens_at_extraction

    async def wait_for_extraction(self, timeout: float | None = 60.0) -> bool:  # noqa: ASYNC109
        """Wait for an extraction in flight (never cancelling it); True when none is running any more."""
        task = self._task
        if task is None or task.done():
            return True
        if task is asyncio.current_task():
            return False
        done, _ = await asyncio.wait({task}, timeout=timeout)
        return bool(done)

    @asynccontextmanager
    async def paused(self, timeout: float = 60.0) -> AsyncIterator[None]:  # noqa: ASYNC109
        """While inside, no extraction starts; one already running is waited for first (and
        cancelled when it takes longer than `timeout`), so it never overlaps a compaction request."""
        self._pauses += 1
        try:
            if not await self.wait_for_extraction(timeout):
                await self._cancel()
            yield
        finally:
            self._pauses -= 1

    async def _cancel(self) -> None:
        task = self._task
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def aclose(self) -> None:
        """Stop an extraction in flight (the session is closing)."""
        await self._cancel()

    def restore(self, records: Iterable[Any]) -> bool:
        """Resume from the last `session-memory` record; rewrite the memory file when it is missing."""
        last = None
        for record in records:
            if isinstance(record, SessionMemoryRecord):
                last = record
        if last is None:
            return False
        self._apply(last)
        if not self.path.exists():
            try:
                write_private_file(self.path, last.content + "\n")
            except OSError as exc:
                self.last_error = f"cannot rewrite {self.path}: {exc.strerror or exc}"
                logger.warning("session memory: %s", self.last_error)
        return True


# --- The kept tail of a session-memory compaction ----------------------------------------


def _is_opening_entry(message: Message) -> bool:
    return isinstance(message, SystemMessage) or (
        isinstance(message, UserMessage) and (message.is_meta or message.is_compact_summary)
    )


def tail_floor(view: list[Message]) -> int:
    """The first index a kept tail may start at: after the last compact boundary and whatever opens
    the view behind it (the summary, the meta context entry)."""
    floor = 0
    for index in range(len(view) - 1, -1, -1):
        message = view[index]
        if isinstance(message, SystemMessage) and message.subtype == "compact_boundary":
            floor = index + 1
            break
    while floor < len(view) and _is_opening_entry(view[floor]):
        floor += 1
    return floor


def select_kept_tail(
    view: list[Message],
    last_summarized_uuid: str,
    state: PipelineState,
    *,
    min_tokens: int = KEPT_TAIL_MIN_TOKENS,
    min_messages: int = KEPT_TAIL_MIN_MESSAGES,
    max_tokens: int = KEPT_TAIL_MAX_TOKENS,
) -> int | None:
    """Where the kept tail starts in `view`, or None (stale notes, or no tail worth keeping).

    The tail holds everything after the last summarized message and extends back from there
    until it has both `min_tokens` and `min_messages` (system entries do not count), never
    growing past `max_tokens` (what the notes do not cover is kept whatever its size). Then it
    moves back so no tool_use is split from its result nor one streamed reply split apart. It
    never starts at the opening context or before the last compact boundary, and it is None
    when it would be empty or would keep everything (nothing to compact).
    """
    last = next((i for i in range(len(view) - 1, -1, -1) if view[i].uuid == last_summarized_uuid), None)
    if last is None:
        return None
    floor = tail_floor(view)
    start = max(last + 1, floor)

    def size(message: Message) -> int:
        return 0 if isinstance(message, SystemMessage) else estimate_message(message, state)

    tokens = sum(size(m) for m in view[start:])
    count = sum(1 for m in view[start:] if not isinstance(m, SystemMessage))
    while start > floor and not (tokens >= min_tokens and count >= min_messages):
        earlier = view[start - 1]
        if tokens + size(earlier) > max_tokens:
            break
        start -= 1
        tokens += size(earlier)
        count += not isinstance(earlier, SystemMessage)
    start = index_of(view, state).cut_at_or_before(start)
    if start <= floor or start >= len(view):
        return None
    return start
