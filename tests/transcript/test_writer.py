import json
import stat
from pathlib import Path

import pytest

import agent_repl
from agent_repl.core.model.messages import (
    AssistantMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    UserMessage,
)
from agent_repl.core.tooling.persisted_output import ensure_private_dir
from agent_repl.transcript.loader import load_session
from agent_repl.transcript.paths import SessionPaths
from agent_repl.transcript.records import SideRecord
from agent_repl.transcript.writer import TranscriptWriter, encode_record

SESSION = "9d1c3a52-6b7e-4f80-a1b2-c3d4e5f6a7b8"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def append_raw(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


async def write_all(writer: TranscriptWriter, items) -> None:
    for item in items:
        if isinstance(item, SideRecord):
            await writer.append_record(item)
        else:
            await writer.append_message(item)


async def test_written_session_loads_back_exactly(tmp_path, session_items):
    paths = SessionPaths(home=tmp_path / "home", cwd=Path("/home/dev/p"), session_id=SESSION)
    async with TranscriptWriter(paths, git_branch="main") as writer:
        await write_all(writer, session_items)

    loaded = load_session(paths.transcript)
    assert loaded.warnings == []
    assert loaded.session_id == SESSION
    expected = [m for m in session_items if not isinstance(m, SideRecord)]
    strip = {"parent_uuid", "logical_parent_uuid"}
    assert [m.model_dump(exclude=strip) for m in loaded.messages] == [
        m.model_dump(exclude=strip) for m in expected
    ]
    assert loaded.side_records == [r for r in session_items if isinstance(r, SideRecord)]
    assert loaded.metadata.title == "Longest line" and loaded.metadata.git_branch == "main"
    assert loaded.metadata.version == agent_repl.__version__ and loaded.metadata.cwd == "/home/dev/p"
    assert loaded.leaf_uuid == expected[-1].uuid


async def test_writer_links_the_chain_and_writes_boundaries_like_claude_code(tmp_path):
    paths = SessionPaths(home=tmp_path, cwd=Path("/p"), session_id=SESSION)
    first = UserMessage(content="a")
    reply = AssistantMessage(message_id="m1", content=[TextBlock(text="b")])
    boundary = SystemMessage(subtype="compact_boundary", metadata={"trigger": "manual", "preTokens": 10})
    summary = UserMessage(content="summary", is_compact_summary=True)
    explicit = UserMessage(content="c", parent_uuid=first.uuid)
    async with TranscriptWriter(paths) as writer:
        records = [await writer.append_message(m) for m in (first, reply, boundary, summary, explicit)]
    assert records[0]["parentUuid"] is None
    assert records[1]["parentUuid"] == first.uuid
    assert records[2]["parentUuid"] is None and records[2]["logicalParentUuid"] == reply.uuid
    assert records[3]["parentUuid"] == boundary.uuid
    assert records[4]["parentUuid"] == first.uuid  # a parent the caller set is kept
    on_disk = [json.loads(line) for line in paths.transcript.read_text().splitlines()]
    assert on_disk == records


async def test_resumed_writer_continues_from_the_leaf(tmp_path):
    paths = SessionPaths(home=tmp_path, cwd=Path("/p"), session_id=SESSION)
    async with TranscriptWriter(paths) as writer:
        await writer.append_message(UserMessage(content="one"))
        await writer.append_message(AssistantMessage(message_id="m1", content=[TextBlock(text="two")]))
    loaded = load_session(paths.transcript)
    async with TranscriptWriter(paths, last_uuid=loaded.leaf_uuid) as writer:
        await writer.append_message(UserMessage(content="three"))
    again = load_session(paths.transcript)
    assert [m.text() for m in again.messages] == ["one", "two", "three"] and again.warnings == []


async def test_each_record_is_on_disk_when_append_returns(tmp_path):
    paths = SessionPaths(home=tmp_path, cwd=Path("/p"), session_id=SESSION)
    writer = TranscriptWriter(paths)
    try:
        await writer.append_message(UserMessage(content="first"))
        # Another reader sees the whole line before close(): a flush per record.
        assert paths.transcript.read_text().endswith("\n")
        assert json.loads(paths.transcript.read_text())["message"]["content"] == "first"
    finally:
        await writer.close()


async def test_crash_mid_write_loses_only_the_torn_line(tmp_path):
    paths = SessionPaths(home=tmp_path, cwd=Path("/p"), session_id=SESSION)
    async with TranscriptWriter(paths) as writer:
        await writer.append_message(UserMessage(content="kept"))
    line = encode_record(
        writer.message_record(AssistantMessage(message_id="m", content=[TextBlock(text="lost")]))
    )
    append_raw(paths.transcript, line[: len(line) // 2])  # what a SIGKILL during the write leaves
    loaded = load_session(paths.transcript)
    assert [m.text() for m in loaded.messages] == ["kept"]
    assert loaded.warnings == ["line 2: torn last line (the write was cut off), skipped"]


async def test_files_are_private(tmp_path):
    home = tmp_path / "home"
    paths = SessionPaths(home=home, cwd=Path("/home/dev/p"), session_id=SESSION)
    async with TranscriptWriter(paths) as writer:
        await writer.append_message(UserMessage(content="x"))
    ensure_private_dir(paths.tool_results_dir)  # as persisted_output makes it
    assert mode(paths.transcript) == 0o600
    for directory in (home, home / "projects", paths.project_dir, paths.session_dir, paths.tool_results_dir):
        assert mode(directory) == 0o700, directory


async def test_api_key_and_environment_never_reach_the_file(tmp_path, monkeypatch, session_items):
    fake_key = "sk-ant-api03-FAKEFAKEFAKE-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_key)
    monkeypatch.setenv("AGENT_REPL_SECRET_PROBE", "probe-value-7f3a")
    paths = SessionPaths(home=tmp_path, cwd=Path("/home/dev/p"), session_id=SESSION)
    async with TranscriptWriter(paths, git_branch="main") as writer:
        await write_all(writer, session_items)
        await writer.append_message(UserMessage(content="late"))
    data = paths.transcript.read_bytes()
    assert fake_key.encode() not in data and b"probe-value-7f3a" not in data
    assert b"ANTHROPIC" not in data


async def test_undecodable_tool_output_is_written_and_read_back(tmp_path):
    paths = SessionPaths(home=tmp_path, cwd=Path("/p"), session_id=SESSION)
    garbled = b"ok \xff\xfe bytes".decode("utf-8", errors="surrogateescape")
    async with TranscriptWriter(paths) as writer:
        await writer.append_message(UserMessage(content=[ToolResultBlock(tool_use_id="t", content=garbled)]))
        await writer.append_message(UserMessage(content="après"))
    loaded = load_session(paths.transcript)
    assert loaded.messages[0].tool_results()[0].content == garbled
    assert loaded.messages[1].content == "après" and loaded.warnings == []


def test_invalid_session_id_is_refused(tmp_path):
    with pytest.raises(ValueError):
        SessionPaths(home=tmp_path, cwd=Path("/p"), session_id="../../etc/passwd")


async def test_forking_a_claude_code_session_gives_a_clean_chain(tmp_path):
    # The original links name progress and stop-hook records, which are not copied.
    loaded = load_session(Path(__file__).parent / "fixtures" / "cc_2.1.22_microcompact.jsonl")
    paths = SessionPaths(home=tmp_path, cwd=Path("/p"), session_id=SESSION)
    async with TranscriptWriter(paths) as writer:
        await writer.append_history(loaded.messages)
    forked = load_session(paths.transcript)
    assert forked.warnings == [] and forked.session_id == SESSION
    assert [m.uuid for m in forked.messages] == [m.uuid for m in loaded.messages]
