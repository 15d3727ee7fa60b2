"""Session memory (docs/architecture.md 5.9): the kept-tail rule on hand-built views, and the background
extraction with an in-memory session and a fake model client."""

from __future__ import annotations

import asyncio
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_repl.context.boundary import BoundarySlice
from agent_repl.context.compact_prompt import MEMORY_REQUEST_MARKER
from agent_repl.context.estimate import estimate_message
from agent_repl.context.projector import Pipeline
from agent_repl.context.session_memory import SessionMemory, extraction_thresholds, select_kept_tail
from agent_repl.context.state import PipelineState
from agent_repl.context.thresholds import autocompact_threshold, effective_window
from agent_repl.core.api.client import ModelResponse
from agent_repl.core.config.settings import Settings
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
    new_uuid,
)
from agent_repl.core.model.transcript_sink import MemorySink
from agent_repl.session import Session
from agent_repl.transcript.records import SessionMemoryRecord, SnipRecord

BODY = "apple " * 1000  # about a thousand tokens per entry


def user(text: str = BODY) -> UserMessage:
    return UserMessage(content=text)


def reply(message_id: str | None = None, text: str = BODY) -> AssistantMessage:
    return AssistantMessage(message_id=message_id or new_uuid(), content=[TextBlock(text=text)])


def call(tool_id: str, message_id: str) -> AssistantMessage:
    return AssistantMessage(message_id=message_id, content=[ToolUseBlock(id=tool_id, name="Read", input={"file_path": "a"})])


def thinking(message_id: str) -> AssistantMessage:
    return AssistantMessage(message_id=message_id, content=[ThinkingBlock(thinking="hmm " * 50, signature="sig")])


def result(tool_id: str) -> UserMessage:
    return UserMessage(content=[ToolResultBlock(tool_use_id=tool_id, content=BODY)])


def context_entry() -> UserMessage:
    return UserMessage(content="<env>cwd: /p</env>", is_meta=True)


def turns(n: int) -> list[Message]:
    """The opening context, then n prompt/reply pairs: u0 at 1, a0 at 2, u1 at 3 ..."""
    view: list[Message] = [context_entry()]
    for _ in range(n):
        view += [user(), reply()]
    return view


@pytest.fixture
def state() -> PipelineState:
    return PipelineState()


@pytest.fixture
def unit(state: PipelineState) -> int:
    return estimate_message(user(), state)


# --- select_kept_tail ------------------------------------------------------------------------------


def test_the_tail_extends_back_until_both_minimums_hold(state, unit):
    view = turns(10)  # a6 is at 14; 15..20 are not summarized yet (six entries)
    last = view[14].uuid
    assert select_kept_tail(view, last, state, min_tokens=int(3.5 * unit), min_messages=5) == 15
    assert select_kept_tail(view, last, state, min_tokens=int(3.5 * unit), min_messages=8) == 13
    assert select_kept_tail(view, last, state, min_tokens=int(9.5 * unit), min_messages=5) == 11
    assert select_kept_tail(view, last, state, min_tokens=int(2.5 * unit), min_messages=9) == 12


def test_the_tail_never_grows_past_the_maximum_but_keeps_everything_not_summarized(state, unit):
    view = turns(10)
    tail = select_kept_tail(view, view[14].uuid, state, min_tokens=15 * unit, max_tokens=int(8.5 * unit))
    assert tail == 13
    # Six unsummarized entries are over a 3.5-entry maximum: all six stay, nothing more.
    assert select_kept_tail(view, view[14].uuid, state, min_tokens=15 * unit, max_tokens=int(3.5 * unit)) == 15


def test_system_entries_are_not_counted_as_messages(state):
    view = turns(4)
    for index in (8, 6):
        view.insert(index, SystemMessage(subtype="informational", content="note"))
    # [ctx u0 a0 u1 a1 u2 sys a2 u3 sys a3]; a1 (4) is summarized; 5.. holds four real entries.
    assert select_kept_tail(view, view[4].uuid, state, min_tokens=0, min_messages=4) == 5
    assert select_kept_tail(view, view[4].uuid, state, min_tokens=0, min_messages=5) == 4


def test_the_tail_never_separates_a_tool_result_from_its_tool_use(state):
    view: list[Message] = [context_entry(), user(), call("t1", "m1"), result("t1"), reply("m2"), user(), reply("m3"), user(), reply("m4")]
    last = view[4].uuid
    assert select_kept_tail(view, last, state, min_tokens=0, min_messages=5) == 4
    # Six entries would start at the result: the start moves back to its call.
    assert select_kept_tail(view, last, state, min_tokens=0, min_messages=6) == 2


def test_the_tail_keeps_every_entry_of_one_streamed_reply(state):
    view: list[Message] = [
        context_entry(),
        user(),
        thinking("m1"),
        call("t1", "m1"),
        result("t1"),  # stored between the blocks of the same reply
        call("t2", "m1"),
        result("t2"),
        reply("m2"),
        user(),
        reply("m3"),
    ]
    last = view[7].uuid
    assert select_kept_tail(view, last, state, min_tokens=0, min_messages=3) == 7
    # Starting at the second tool_use (5) would cut the reply from its thinking and first call.
    assert select_kept_tail(view, last, state, min_tokens=0, min_messages=5) == 2
    # Starting at its result (6) needs its call (5), whose reply starts at 2.
    assert select_kept_tail(view, last, state, min_tokens=0, min_messages=4) == 2


def test_the_tail_never_reaches_the_opening_context_or_behind_a_compact_boundary(state):
    assert select_kept_tail(turns(2), turns(2)[0].uuid, state) is None  # uuid of another view: stale
    short = turns(2)
    # Everything from the first prompt would be kept: there is nothing to compact.
    assert select_kept_tail(short, short[2].uuid, state, min_tokens=0, min_messages=10) is None
    compacted: list[Message] = [
        SystemMessage(subtype="compact_boundary", content="Conversation compacted"),
        UserMessage(content="summary", is_compact_summary=True),
        *turns(3)[1:],  # u a u a u a at 2..7
        UserMessage(content="re-read file", is_meta=True),
        user(),
        reply(),
    ]
    last = compacted[7].uuid
    assert select_kept_tail(compacted, last, state, min_tokens=0, min_messages=7) == 4
    assert select_kept_tail(compacted, last, state, min_tokens=0, min_messages=8) == 3
    assert select_kept_tail(compacted, last, state, min_tokens=0, min_messages=9) is None


def test_stale_or_empty_tails_give_none(state, unit):
    view = turns(3)
    assert select_kept_tail(view, "not-in-this-view", state) is None
    # The notes cover the last entry and nothing before it fits under the maximum.
    assert select_kept_tail(view, view[-1].uuid, state, max_tokens=unit // 2) is None


# --- the background extraction -----------------------------------------------------------------------


class FakeClient:
    """Answers every request with `reply_text`; a request waits while `gate` is clear."""

    def __init__(self, reply_text: str = "<analysis>x</analysis>\n<summary>\n1. Notes\n</summary>") -> None:
        self.reply_text = reply_text
        self.stop_reason = "end_turn"
        self.error: Exception | None = None
        self.gate = asyncio.Event()
        self.gate.set()
        self.bodies: list[dict[str, Any]] = []

    async def stream(
        self, body: dict[str, Any], betas: list[str] | None = None, raw_events: bool = False
    ) -> AsyncIterator[Any]:
        self.bodies.append(body)
        await self.gate.wait()
        if self.error is not None:
            raise self.error
        yield ModelResponse(
            message_id="msg_1",
            model=body["model"],
            content=[TextBlock(text=self.reply_text)],
            stop_reason=self.stop_reason,
            usage=Usage(input_tokens=10, cache_read_input_tokens=900, output_tokens=20),
            request_id=None,
        )


def fake_session(tmp_path: Path, client: FakeClient, entries: int) -> Session:
    session = Session(
        session_id="s1",
        cwd=tmp_path,
        settings=Settings(),
        client=client,  # type: ignore[arg-type]
        tools=[],
        projector=Pipeline([BoundarySlice()]),
        sink=MemorySink(),
        tool_results_dir=tmp_path / "tool-results",
        history=turns(entries),
    )
    return session


def grow(session: Session, entries: int) -> None:
    for _ in range(entries):
        session.messages += [user(), reply()]


def size(session: Session) -> int:
    return session.projector.project(session.messages, dry_run=True).estimated_tokens


async def test_an_extraction_runs_in_the_background_once_the_conversation_has_grown(tmp_path, unit):
    client = FakeClient()
    client.gate.clear()
    session = fake_session(tmp_path, client, 2)
    memory = SessionMemory(tmp_path / "s1" / "memory.md", first_after_tokens=8 * unit, every_tokens=6 * unit)
    memory.maybe_start(session)
    await asyncio.sleep(0)
    assert not memory.extracting and client.bodies == []
    grow(session, 3)
    covered, tokens = session.messages[-1].uuid, size(session)
    memory.maybe_start(session)
    await asyncio.sleep(0)
    # Running, not finished: maybe_start returned at once; a second call does not start another.
    assert memory.extracting and len(client.bodies) == 1
    memory.maybe_start(session)
    await asyncio.sleep(0)
    assert len(client.bodies) == 1
    question = client.bodies[0]["messages"][-1]["content"][-1]["text"]
    assert question.startswith(MEMORY_REQUEST_MARKER)
    client.gate.set()
    assert await memory.wait_for_extraction(timeout=5)
    assert memory.last_error is None and memory.content == "1. Notes"
    assert memory.last_summarized_uuid == covered and memory.tokens_at_extraction == tokens
    assert memory.path.read_text() == "1. Notes\n"
    assert stat.S_IMODE(memory.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(memory.path.parent.stat().st_mode) == 0o700
    [record] = session.sink.records  # type: ignore[attr-defined]
    assert isinstance(record, SessionMemoryRecord)
    assert (record.content, record.last_summarized_uuid, record.tokens_at_extraction) == ("1. Notes", covered, tokens)
    assert set(record.to_json()) == {"type", "sessionId", "timestamp", "content", "lastSummarizedUuid", "tokensAtExtraction"}
    assert session.usage_total.cache_read_input_tokens == 900  # the fork's cost is the session's


async def test_later_extractions_wait_for_another_step_of_growth(tmp_path, unit):
    client = FakeClient()
    session = fake_session(tmp_path, client, 5)
    memory = SessionMemory(tmp_path / "memory.md", first_after_tokens=8 * unit, every_tokens=6 * unit)
    memory.maybe_start(session)
    assert await memory.wait_for_extraction(timeout=5) and memory.extractions == 1
    grow(session, 2)
    memory.maybe_start(session)
    assert not memory.extracting
    grow(session, 1)
    memory.maybe_start(session)
    assert memory.extracting
    assert await memory.wait_for_extraction(timeout=5) and memory.extractions == 2
    assert memory.last_summarized_uuid == session.messages[-1].uuid


async def test_a_failed_extraction_is_kept_as_last_error_and_retried_after_more_growth(tmp_path, unit):
    client = FakeClient()
    client.error = RuntimeError("overloaded")
    session = fake_session(tmp_path, client, 5)
    memory = SessionMemory(tmp_path / "memory.md", first_after_tokens=8 * unit, every_tokens=6 * unit)
    memory.maybe_start(session)
    assert await memory.wait_for_extraction(timeout=5)
    assert memory.last_error == "RuntimeError: overloaded" and memory.content is None
    assert session.sink.records == [] and not memory.path.exists()  # type: ignore[attr-defined]
    grow(session, 1)
    memory.maybe_start(session)
    assert not memory.extracting  # not on every turn: after another first-size step
    client.error = None
    grow(session, 8)
    memory.maybe_start(session)
    assert await memory.wait_for_extraction(timeout=5)
    assert memory.last_error is None and memory.content == "1. Notes"


@pytest.mark.parametrize(
    ("text", "stop", "error"),
    [
        ("no notes", "max_tokens", "cut off"),
        # At the window's edge (found by the replay benchmark: such notes were kept, half of section 6 gone).
        ("<summary>\n1. Notes\n6. All User Messages:\n   - (text", "model_context_window_exceeded", "cut off"),
        ("<analysis>only</analysis>", "end_turn", "no notes"),
    ],
)
async def test_unusable_replies_are_errors_not_notes(tmp_path, unit, text, stop, error):
    client = FakeClient(text)
    client.stop_reason = stop
    session = fake_session(tmp_path, client, 5)
    memory = SessionMemory(tmp_path / "memory.md", first_after_tokens=unit)
    memory.maybe_start(session)
    assert await memory.wait_for_extraction(timeout=5)
    assert error in (memory.last_error or "") and memory.content is None


async def test_paused_waits_for_the_extraction_in_flight_and_starts_none(tmp_path, unit):
    client = FakeClient()
    client.gate.clear()
    session = fake_session(tmp_path, client, 5)
    memory = SessionMemory(tmp_path / "memory.md", first_after_tokens=unit, every_tokens=unit)
    memory.maybe_start(session)
    await asyncio.sleep(0)
    entered = asyncio.Event()

    async def compaction() -> None:
        async with memory.paused():
            entered.set()
            grow(session, 5)
            memory.maybe_start(session)
            assert not memory.extracting and memory.is_paused
            await asyncio.sleep(0)

    running = asyncio.create_task(compaction())
    await asyncio.sleep(0.01)
    assert not entered.is_set()  # the compaction waits for the extraction to finish
    client.gate.set()
    await asyncio.wait_for(running, 5)
    assert entered.is_set() and len(client.bodies) == 1 and not memory.is_paused
    memory.maybe_start(session)
    assert memory.extracting


async def test_paused_cancels_an_extraction_that_takes_too_long_and_aclose_stops_one(tmp_path, unit):
    client = FakeClient()
    client.gate.clear()
    session = fake_session(tmp_path, client, 5)
    memory = SessionMemory(tmp_path / "memory.md", first_after_tokens=unit)
    memory.maybe_start(session)
    await asyncio.sleep(0)
    async with memory.paused(timeout=0.01):
        assert not memory.extracting
    assert memory.content is None and session.sink.records == []  # type: ignore[attr-defined]
    memory.maybe_start(session)
    await asyncio.sleep(0)
    assert memory.extracting
    await memory.aclose()
    assert not memory.extracting


def test_restore_takes_the_last_record_and_rewrites_a_missing_file(tmp_path):
    path = tmp_path / "session" / "memory.md"
    records = [
        SessionMemoryRecord(content="old", last_summarized_uuid="u1", tokens_at_extraction=11_000),
        SnipRecord(uuids=["x"], source="user"),
        SessionMemoryRecord(content="new notes", last_summarized_uuid="u9", tokens_at_extraction=31_000),
        {"type": "some-future-record"},
    ]
    memory = SessionMemory(path)
    assert memory.restore(records)
    assert (memory.content, memory.last_summarized_uuid, memory.tokens_at_extraction) == ("new notes", "u9", 31_000)
    assert path.read_text() == "new notes\n" and stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text("edited by hand\n")
    SessionMemory(path).restore(records)
    assert path.read_text() == "edited by hand\n"  # an existing file is left alone
    empty = SessionMemory(tmp_path / "other.md")
    assert not empty.restore([SnipRecord(uuids=["x"], source="user")]) and empty.content is None
    # The next extraction after a resume waits for growth past the restored size.
    assert not memory.due(31_000 + 19_999) and memory.due(31_000 + 20_000)


def test_notes_are_made_once_shortly_before_the_compaction_point(tmp_path):
    at = autocompact_threshold(effective_window(200_000))
    assert extraction_thresholds(at) == (150_300, 41_750)
    assert extraction_thresholds(autocompact_threshold(effective_window(60_000))) == (45_090, 12_525)
    first, every = extraction_thresholds(at)
    memory = SessionMemory(tmp_path / "memory.md", first_after_tokens=first, every_tokens=every)
    assert not memory.due(first - 1) and memory.due(first)
    assert memory.restore([SessionMemoryRecord(content="notes", last_summarized_uuid="u", tokens_at_extraction=first)])
    # Below the compaction point the view cannot grow a quarter of it again: one set of notes per compaction.
    assert not memory.due(at)
    # After a compaction the view is small; notes come again only when it nears the point once more.
    memory.maybe_start(None, 30_000)  # type: ignore[arg-type]
    assert not memory.due(first - 1) and memory.due(first)


async def test_a_failure_to_measure_the_conversation_never_reaches_the_turn(tmp_path):
    class BrokenProjector:
        def project(self, history: list[Message], *, dry_run: bool = False) -> Any:
            raise RuntimeError("boom")

    session = fake_session(tmp_path, FakeClient(), 5)
    session.projector = BrokenProjector()  # type: ignore[assignment]
    memory = SessionMemory(tmp_path / "memory.md", first_after_tokens=1)
    memory.maybe_start(session)
    assert memory.last_error == "RuntimeError: boom" and not memory.extracting


async def test_an_after_turn_check_reads_the_turns_estimate_and_an_extraction_projects_once(tmp_path, unit):
    """The estimate `TurnEnded` carries decides; the extraction's fork sends the one view it measured."""
    client = FakeClient()
    session = fake_session(tmp_path, client, 5)
    dry_runs: list[bool] = []
    project = session.projector.project

    def counted(history: list[Message], *, dry_run: bool = False) -> Any:
        dry_runs.append(dry_run)
        return project(history, dry_run=dry_run)

    session.projector.project = counted  # type: ignore[method-assign]
    memory = SessionMemory(tmp_path / "memory.md", first_after_tokens=8 * unit, every_tokens=6 * unit)
    memory.maybe_start(session, 8 * unit - 1)
    assert not memory.extracting and dry_runs == []
    memory.maybe_start(session, 8 * unit)
    assert await memory.wait_for_extraction(timeout=5) and memory.extractions == 1
    assert dry_runs == [True] and len(client.bodies) == 1
