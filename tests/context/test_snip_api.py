"""The snip API behind `/snip` and the model's Snip tool, with an in-memory session (docs/architecture.md 5.3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_repl.context.boundary import BoundarySlice
from agent_repl.context.ids import short_id
from agent_repl.context.projector import Pipeline
from agent_repl.context.snip import (
    SnipStage,
    install_snip,
    snip_messages,
    snippable_messages,
)
from agent_repl.core.model.messages import Message
from agent_repl.core.tooling.tool import ToolContext, ToolPorts
from agent_repl.tools.snip import Snip, SnipArgs
from agent_repl.transcript.records import SnipRecord

from .test_snip import BIG, history


class FakeSession:
    """The parts of a session snipping uses, kept in memory."""

    def __init__(self, messages: list[Message]) -> None:
        self.messages = messages
        self.tool_ports = ToolPorts()
        self.records: list[Any] = []

    async def append_record(self, record: Any) -> None:
        self.records.append(record)


def wire_text(pipeline: Pipeline, session: FakeSession) -> str:
    return str(pipeline.project(session.messages, dry_run=True).wire)


async def test_snip_messages_writes_the_record_and_the_next_view_lacks_the_span():
    session, pipeline = FakeSession(history()), Pipeline([BoundarySlice(), SnipStage()])
    target = session.messages[3]
    assert BIG[:40] in wire_text(pipeline, session)
    done = await snip_messages(session, pipeline, short_id(target.uuid), reason="read it already")
    assert not done.is_error
    [record] = session.records
    assert isinstance(record, SnipRecord) and record.source == "user" and record.reason == "read it already"
    assert record.uuids == [session.messages[2].uuid, target.uuid]
    assert done.user_text == f"Snipped 2 messages, ~{record.tokens_freed:,} tokens"
    assert "no longer in your context" in done.model_text
    assert BIG[:40] not in wire_text(pipeline, session)
    # The history keeps everything.
    assert len(session.messages) == 11 and session.messages[3] is target


async def test_a_refused_snip_writes_nothing():
    session, pipeline = FakeSession(history()), Pipeline([BoundarySlice(), SnipStage()])
    before = wire_text(pipeline, session)
    # The model snips mid-turn, so its own turn is off limits.
    done = await snip_messages(session, pipeline, short_id(session.messages[10].uuid), source="model")
    assert done.is_error and done.user_text == "Nothing snipped: cannot snip the current turn"
    assert session.records == [] and pipeline.state.snip.snipped == set()
    assert wire_text(pipeline, session) == before


async def test_the_tool_calls_the_installed_callback_as_the_model(tmp_path: Path):
    session, pipeline = FakeSession(history()), Pipeline([BoundarySlice(), SnipStage()])
    install_snip(session, pipeline)
    assert session.tool_ports.snip is not None
    ctx = ToolContext(cwd=tmp_path, tool_results_dir=tmp_path / "tool-results", ports=session.tool_ports)
    first, last = short_id(session.messages[1].uuid), short_id(session.messages[5].uuid)
    output = await Snip().run(SnipArgs(start_id=first, end_id=last, reason="survey done"), ctx)
    assert not output.is_error, output.content
    assert "Snipped 5 messages, including 2 tool calls with their results" in str(output.content)
    [record] = session.records
    assert record.source == "model" and record.reason == "survey done"
    assert output.structured == {"snipped": 5, "uuids": record.uuids, "tokensFreed": record.tokens_freed}

    refused = await Snip().run(SnipArgs(start_id="nope00"), ctx)
    assert refused.is_error and "nope00" in str(refused.content)
    assert refused.summary == "Nothing snipped: no message 'nope00' in the current view"


async def test_without_a_callback_the_tool_says_so(tmp_path: Path):
    ctx = ToolContext(cwd=tmp_path, tool_results_dir=tmp_path)
    output = await Snip().run(SnipArgs(start_id="abcdef"), ctx)
    assert output.is_error and "not available" in str(output.content)


def test_the_tool_schema_names_its_three_arguments():
    schema = Snip().api_schema()
    assert schema["name"] == "Snip" and "[id:" in schema["description"]
    properties = schema["input_schema"]["properties"]
    assert set(properties) == {"start_id", "end_id", "reason"}
    assert schema["input_schema"]["required"] == ["start_id"]


def test_the_picker_lists_what_may_be_snipped_with_ids_sizes_and_first_lines():
    session, pipeline = FakeSession(history()), Pipeline([BoundarySlice(), SnipStage()])
    items = snippable_messages(session, pipeline)
    view = session.messages
    # Between turns the user may snip anything but the system note, the latest turn included;
    # only user entries carry a short id.
    assert [item.uuid for item in items] == [view[i].uuid for i in (0, 1, 2, 3, 4, 5, 7, 8, 9, 10)]
    assert [item.id for item in items] == [
        "",
        short_id(view[1].uuid),
        "",
        short_id(view[3].uuid),
        "",
        short_id(view[5].uuid),
        "",
        short_id(view[8].uuid),
        "",
        short_id(view[10].uuid),
    ]
    assert [item.role for item in items] == [
        "user",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert items[2].first_line == 'Read {"file_path": "/src/a.py"}'
    assert items[3].first_line.startswith("Read result: alpha beta") and len(items[3].first_line) <= 100
    assert items[3].tokens > items[5].tokens > 0
    assert items[6].first_line == "Both read."


async def test_between_turns_the_user_may_snip_the_latest_turn():
    session, pipeline = FakeSession(history()), Pipeline([BoundarySlice(), SnipStage()])
    done = await snip_messages(session, pipeline, short_id(session.messages[10].uuid))
    assert not done.is_error
    # The call goes with its result.
    assert set(done.record.uuids) == {session.messages[9].uuid, session.messages[10].uuid}
