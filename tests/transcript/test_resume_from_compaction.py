"""Resuming our own long session builds only what the model's view can reach; the rest stays in the file.

The loader passes over the entries before the compaction the view starts at (it builds none of
them), the session reads them back only when asked (a second /uncompact, /export, a compaction's
reminders, scrolling up), our own entries are not redacted a second time, and a foreign entry is.
"""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path

from agent_repl.bootstrap import ResumeSource, close_session, find_resume_source, open_session
from agent_repl.context.attachments import standing_context
from agent_repl.context.boundary import slice_after_compact_boundary
from agent_repl.context.compact import undo_last_compaction
from agent_repl.context.context_session import history_for_reminders
from agent_repl.context.touched_files import touched_files_reminder
from agent_repl.context.user_messages import typed_texts
from agent_repl.core.config.settings import load_settings
from agent_repl.core.model.messages import (
    AssistantMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from agent_repl.core.model.todos import latest_todos
from agent_repl.core.tooling.redaction import REDACTED, SecretRedactor
from agent_repl.transcript import loader, tail_scan
from agent_repl.transcript.loader import load_earlier, load_session
from agent_repl.transcript.paths import SessionPaths
from agent_repl.transcript.records import TokenRatioRecord
from agent_repl.transcript.writer import TranscriptWriter

SID = "7c0ffee0-1111-4222-8333-944445555666"
SECRET = "sk-ant-api03-" + "Q" * 40


async def write_session(home: Path, cwd: Path, rounds: int, *, exchanges: int = 6, filler: int = 200) -> Path:
    """A session of `rounds` compactions (each keeping the last two exchanges) and a last open round;
    the first round's last call is a TodoWrite."""
    paths = SessionPaths(home=home, cwd=cwd, session_id=SID)
    paths.ensure_project_dir()
    writer = TranscriptWriter(paths)
    await writer.append_message(UserMessage(content="Context for this session", is_meta=True))
    for r in range(rounds + 1):
        prompts = []
        for i in range(exchanges):
            prompt = UserMessage(content=f"round {r} prompt {i} " + "x" * filler)
            prompts.append(prompt)
            await writer.append_message(prompt)
            if r == 0 and i == 0:
                read = ToolUseBlock(id="toolu_read0", name="Read", input={"file_path": "/src/app.py"})
                await writer.append_message(AssistantMessage(message_id="msg_read0", content=[read], usage=Usage(output_tokens=3)))
                result = ToolResultBlock(tool_use_id=read.id, content="     1→print('hi')")
                await writer.append_message(UserMessage(content=[result], tool_use_result={"type": "text"}))
            if r == 0 and i == exchanges - 1:
                todos = [{"content": "ship it", "status": "in_progress", "activeForm": "Shipping it"}]
                call = ToolUseBlock(id=f"toolu_todo{r}", name="TodoWrite", input={"todos": todos})
                await writer.append_message(AssistantMessage(message_id=f"msg_t{r}", content=[call], usage=Usage(output_tokens=3)))
                result = ToolResultBlock(tool_use_id=call.id, content="Todos updated")
                await writer.append_message(UserMessage(content=[result], tool_use_result={"newTodos": todos}))
            answer = AssistantMessage(
                message_id=f"msg_{r}_{i}", content=[TextBlock(text=f"answer {r}.{i}")], usage=Usage(input_tokens=9, output_tokens=4)
            )
            await writer.append_message(answer)
        await writer.append_record(TokenRatioRecord(ratio=1.1, tokenizer_ratio=1.0))
        if r == rounds:
            break
        summary = UserMessage(content=f"summary of round {r}", is_compact_summary=True)
        boundary = SystemMessage(
            subtype="compact_boundary",
            content="Conversation compacted",
            metadata={"trigger": "auto", "keptFromUuid": prompts[-2].uuid, "summaryUuid": summary.uuid},
        )
        await writer.append_messages([boundary, summary])
    await writer.close()
    return paths.transcript


def settings_for(home: Path, cwd: Path):
    env = {"AGENT_REPL_HOME": str(home), "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    return load_settings(cwd=cwd, env=env, overrides={"skip_permissions": True})


def uuids(messages) -> list[str]:
    return [m.uuid for m in messages]


async def test_the_loader_builds_no_entry_before_the_compaction_the_view_starts_at(tmp_path, project, monkeypatch):
    path = await write_session(tmp_path / "home", project, rounds=5)
    full = load_session(path)
    built: list[str] = []
    real = loader.record_to_message

    def spy(raw, **kwargs):
        built.append(raw.get("uuid"))
        return real(raw, **kwargs)

    monkeypatch.setattr(loader, "record_to_message", spy)
    part = load_session(path, from_compaction=True)

    assert built == uuids(part.messages)
    assert len(part.messages) < len(full.messages) / 3
    assert uuids(part.messages) == uuids(full.messages)[-len(part.messages) :]
    assert part.messages[0].type == "system" and part.messages[0].subtype == "compact_boundary"
    # The view is the same, and so is every side record, before the cut or after it.
    assert uuids(slice_after_compact_boundary(part.messages)) == uuids(slice_after_compact_boundary(full.messages))
    assert [r.to_json() for r in part.side_records] == [r.to_json() for r in full.side_records]
    assert part.warnings == full.warnings == []
    assert part.leaf_uuid == full.leaf_uuid
    assert part.earlier is not None and part.earlier.entries == len(full.messages) - len(part.messages)
    assert uuids(load_earlier(part.earlier).messages) == uuids(full.messages)[: part.earlier.entries]


async def test_a_file_with_entries_of_another_writer_is_loaded_whole(tmp_path, project):
    path = await write_session(tmp_path / "home", project, rounds=3)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    # The same entries, keys in another order (as another writer would put them).
    path.write_text("".join(json.dumps(dict(reversed(list(r.items())))) + "\n" for r in records))
    part = load_session(path, from_compaction=True)
    assert part.earlier is None and uuids(part.messages) == uuids(load_session(path).messages)


async def test_our_own_entries_are_not_redacted_again_and_a_foreign_one_is(tmp_path, project, monkeypatch):
    home = tmp_path / "home"
    path = await write_session(home, project, rounds=2)
    last = json.loads(path.read_text().splitlines()[-2])  # the last entry (the token-ratio record follows)
    foreign = {
        "parentUuid": last["uuid"], "isSidechain": False, "userType": "external", "cwd": str(project),
        "sessionId": SID, "version": "2.1.9", "gitBranch": "", "type": "user",
        "uuid": "f0f0f0f0-0000-4000-8000-000000000001", "timestamp": "2026-02-03T10:00:00.000Z",
        "message": {"role": "user", "content": f"my key is {SECRET}"},
    }  # fmt: skip
    path.write_text(path.read_text() + json.dumps(foreign, separators=(",", ":")) + "\n")
    redacted: list[str] = []
    real = SecretRedactor.message

    def spy(self, message):
        redacted.append(message.uuid)
        return real(self, message)

    monkeypatch.setattr(SecretRedactor, "message", spy)
    settings = settings_for(home, project)
    session = await open_session(settings, project, resume=find_resume_source(settings, project, SID, latest=False))
    try:
        assert redacted == [foreign["uuid"]]
        [entry] = [m for m in session.messages if m.uuid == foreign["uuid"]]
        assert SECRET not in entry.text() and REDACTED in entry.text()
    finally:
        await close_session(session)


async def test_a_foreign_file_is_redacted_once_when_forked(tmp_path, project):
    home = tmp_path / "home"
    ours = await write_session(home, project, rounds=2)
    elsewhere = tmp_path / "elsewhere.jsonl"
    lines = ours.read_text().splitlines()
    last = json.loads(lines[-2])
    last["message"]["content"] = [{"type": "text", "text": f"the key: {SECRET}"}]
    elsewhere.write_text("\n".join([*lines[:-2], json.dumps(last), lines[-1]]) + "\n")
    settings = settings_for(home, project)
    source = find_resume_source(settings, project, str(elsewhere), latest=False)
    assert source is not None and not source.owned and source.loaded.earlier is None
    session = await open_session(settings, project, resume=source)
    try:
        assert all(SECRET not in (m.text() if m.type != "system" else m.content) for m in session.messages)
        assert len(session.messages) == len(load_session(elsewhere).messages)
        written = Path(session.sink.path).read_text()
    finally:
        await close_session(session)
    assert SECRET not in written and REDACTED in written


async def test_undoing_compactions_past_the_cut_gives_the_view_of_a_whole_load(tmp_path, project):
    homes = [tmp_path / "lazy", tmp_path / "whole"]
    path = await write_session(homes[0], project, rounds=4)
    copy = SessionPaths(home=homes[1], cwd=project, session_id=SID)
    copy.ensure_project_dir()
    shutil.copy(path, copy.transcript)
    views, histories, todos = [], [], []
    for home in homes:
        settings = settings_for(home, project)
        if home == homes[0]:
            source = find_resume_source(settings, project, SID, latest=False)
            assert source is not None and source.loaded.earlier is not None
        else:
            source = ResumeSource(load_session(copy.transcript), copy.transcript, owned=True)
        session = await open_session(settings, project, resume=source)
        try:
            todos.append(session.tool_state["todos"])
            histories.append(uuids(session.full_history()))
            steps = []
            for _ in range(3):
                ok, _text = await undo_last_compaction(session, session.projector)
                assert ok
                steps.append(uuids(session.projector.project(session.messages, dry_run=True).view))
            views.append(steps)
        finally:
            await close_session(session)
    assert views[0] == views[1]
    assert histories[0] == histories[1]
    assert todos[0] == todos[1] and todos[0][0]["content"] == "ship it"


async def test_what_a_resume_keeps_does_not_grow_with_the_history_before_the_cut(tmp_path, project):
    sizes, retained = [], []
    for rounds in (4, 40):
        home = tmp_path / f"home{rounds}"
        path = await write_session(home, project, rounds=rounds, filler=4000)
        tracemalloc.start()
        loaded = load_session(path, from_compaction=True)
        retained.append(tracemalloc.get_traced_memory()[0])
        tracemalloc.stop()
        sizes.append(path.stat().st_size)
        assert len(loaded.messages) < 40
    growth_per_mb = (retained[1] - retained[0]) / (sizes[1] - sizes[0])
    assert sizes[1] - sizes[0] > 1_000_000
    assert growth_per_mb < 0.1


async def test_forking_our_own_long_session_copies_all_of_it(tmp_path, project):
    home = tmp_path / "home"
    path = await write_session(home, project, rounds=3)
    settings = settings_for(home, project)
    source = find_resume_source(settings, project, SID, latest=False)
    assert source is not None and source.loaded.earlier is not None
    source.owned = False  # --fork-session
    session = await open_session(settings, project, resume=source)
    try:
        assert session.earlier is None and session.session_id != SID
        assert uuids(session.messages) == uuids(load_session(path).messages)
        copied = load_session(session.sink.path)
    finally:
        await close_session(session)
    assert uuids(copied.messages) == uuids(session.messages)


async def test_a_compaction_after_a_resume_reminds_of_the_whole_history_from_light_copies(tmp_path, project):
    home = tmp_path / "home"
    path = await write_session(home, project, rounds=4)
    full = load_session(path).messages
    settings = settings_for(home, project)
    session = await open_session(settings, project, resume=find_resume_source(settings, project, SID, latest=False))
    try:
        light = history_for_reminders(session)
        kept = session.messages[-4:]
        assert standing_context(light, kept) == standing_context(full, kept) == "Context for this session"
        assert latest_todos(light) == latest_todos(full) != []
        assert touched_files_reminder(light, kept) == touched_files_reminder(full, kept)
        assert "/src/app.py" in touched_files_reminder(full, kept)
        assert typed_texts(light, set()) == typed_texts(full, set())
        earlier = light[: len(light) - len(session.messages)]
        assert not any(m.type == "assistant" and m.text() for m in earlier)  # replies kept as their calls only
        assert session.earlier is not None  # nothing was taken back into the session
    finally:
        await close_session(session)


async def test_listing_our_own_long_session_decodes_only_what_its_envelopes_do_not_say(tmp_path, project, monkeypatch):
    import re

    from agent_repl.transcript import sessions

    path = await write_session(tmp_path / "home", project, rounds=5)
    entries = len(load_session(path).messages)
    decoded: list[bytes] = []
    real = sessions._classify

    def spy(raw):
        decoded.append(raw)
        return real(raw)

    monkeypatch.setattr(sessions, "_classify", spy)
    info = sessions.scan_session(path)
    assert len(decoded) < entries / 3
    assert info.message_count > entries / 2 and info.first_prompt and info.first_prompt.startswith("round 0 prompt 0")
    # Every line decoded (no envelope recognised) says the same.
    monkeypatch.setattr(sessions, "_OUR_ENVELOPE", re.compile(rb"(?!)"))
    assert sessions.scan_session(path) == info


async def test_damaged_lines_before_the_cut_are_reported_as_a_whole_load_reports_them(tmp_path, project):
    path = await write_session(tmp_path / "home", project, rounds=4)
    lines = path.read_text().splitlines(keepends=True)
    lines[3:3] = ["[1, 2]\n", "{not json\n"]
    path.write_text("".join(lines))
    part, full = load_session(path, from_compaction=True), load_session(path)
    assert part.earlier is not None
    assert part.warnings == full.warnings and len(full.warnings) == 2
    assert uuids(part.messages) == uuids(full.messages)[-len(part.messages) :]


async def test_the_todo_list_before_the_cut_builds_only_the_todowrite_call_and_its_result(tmp_path, project, monkeypatch):
    path = await write_session(tmp_path / "home", project, rounds=5)
    earlier = load_session(path, from_compaction=True).earlier
    assert earlier is not None and earlier.todo_from is not None
    built: list[str] = []
    real = tail_scan.record_to_message

    def spy(raw, **kwargs):
        built.append(raw.get("uuid"))
        return real(raw, **kwargs)

    monkeypatch.setattr(tail_scan, "record_to_message", spy)
    entries = earlier.todo_entries()

    assert built == uuids(entries) and len(entries) == 2
    assert entries[0].type == "assistant" and entries[1].type == "user"
    assert latest_todos(entries) == latest_todos(load_session(path).messages) != []
