"""The preview a resume draws first: the newest entries, read from the end of our own transcript."""

from __future__ import annotations

import json
from pathlib import Path

from agent_repl.core.model.messages import AssistantMessage, TextBlock, UserMessage
from agent_repl.transcript import tail_preview
from agent_repl.transcript.loader import load_session
from agent_repl.transcript.paths import SessionPaths
from agent_repl.transcript.tail_preview import tail_messages
from agent_repl.transcript.writer import TranscriptWriter

from .test_resume_from_compaction import SID, uuids, write_session


async def test_the_preview_is_the_end_of_what_the_resume_shows_from_the_last_compaction(tmp_path, project):
    path = await write_session(tmp_path / "home", project, rounds=5)
    resumed = load_session(path, from_compaction=True)

    preview = tail_messages(path)

    assert preview and uuids(preview) == uuids(resumed.messages)[-len(preview) :]
    assert preview[0].type == "system" and preview[0].subtype == "compact_boundary"
    assert preview[-1].uuid == resumed.messages[-1].uuid


async def test_the_preview_reads_only_the_end_of_a_long_transcript(tmp_path, project, monkeypatch):
    path = await write_session(tmp_path / "home", project, rounds=40, filler=4000)
    built: list[str] = []
    real = tail_preview.record_to_message

    def counting(raw, **kwargs):
        built.append(raw["uuid"])
        return real(raw, **kwargs)

    monkeypatch.setattr(tail_preview, "record_to_message", counting)
    read: list[int] = []
    real_open = Path.open

    def measured_open(self, *args, **kwargs):
        f = real_open(self, *args, **kwargs)
        real_read = f.read

        def read_counting(n=-1):
            data = real_read(n)
            read.append(len(data))
            return data

        f.read = read_counting
        return f

    monkeypatch.setattr(Path, "open", measured_open)
    preview = tail_messages(path, first_chunk=32 * 1024)

    assert built == uuids(preview)  # only the previewed entries are built
    assert sum(read) < path.stat().st_size / 10  # a few chunks from the end, not the file
    assert preview[0].type == "system" and preview[0].subtype == "compact_boundary"


async def test_a_chunk_that_starts_inside_the_chain_grows_until_the_chain_is_whole(tmp_path, project):
    path = await write_session(tmp_path / "home", project, rounds=3)
    whole = tail_messages(path)

    assert uuids(tail_messages(path, first_chunk=200)) == uuids(whole)
    capped = tail_messages(path, max_entries=3)
    assert uuids(capped) == uuids(whole)[-3:]
    # With too little allowed to read, the newest part of the chain is still right.
    short = tail_messages(path, first_chunk=200, max_bytes=2500)
    assert 0 < len(short) < len(whole) and uuids(short) == uuids(whole)[-len(short) :]


async def test_a_session_without_compactions_is_previewed_from_its_first_entry(tmp_path, project):
    path = await write_session(tmp_path / "home", project, rounds=0)
    assert uuids(tail_messages(path)) == uuids(load_session(path).messages)


async def test_a_torn_last_line_is_passed_over(tmp_path, project):
    paths = SessionPaths(home=tmp_path / "home", cwd=project, session_id=SID)
    paths.ensure_project_dir()
    writer = TranscriptWriter(paths)
    question = UserMessage(content="what is in the box?")
    answer = AssistantMessage(message_id="msg_1", content=[TextBlock(text="a cat")])
    await writer.append_messages([question, answer])
    await writer.close()
    with paths.transcript.open("a", encoding="utf-8") as f:
        f.write(
            '{"parentUuid":"' + answer.uuid + '","isSidechain":false,"type":"user","uu'
        )  # a write cut off

    assert uuids(tail_messages(paths.transcript)) == [question.uuid, answer.uuid]
    assert uuids(load_session(paths.transcript).messages)[-2:] == [question.uuid, answer.uuid]


async def test_entries_another_writer_wrote_or_another_session_are_not_previewed(tmp_path, project):
    path = await write_session(tmp_path / "home", project, rounds=1)
    lines = path.read_text(encoding="utf-8").splitlines()
    at = max(i for i, line in enumerate(lines) if json.loads(line)["type"] == "assistant")
    last = json.loads(lines[at])
    last["version"] = "0.0.1-elsewhere"  # not redacted by our writer when it was written
    changed = [*lines[:at], json.dumps(last, separators=(",", ":")), *lines[at + 1 :]]
    path.write_text("\n".join(changed) + "\n", encoding="utf-8")
    assert tail_messages(path) == []

    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert tail_messages(path)
    other = path.with_name("0ther-5e55-4000-8000-000000000000.jsonl")
    path.rename(other)
    assert tail_messages(other) == []  # the entries name another session
    assert tail_messages(path) == []  # gone
