"""An edit session through the real loop and SDK against the emulator: Read, Edit (with its errors),
a stale Edit refused after an external change, Write, Bash, then /rewind of code and conversation."""

from __future__ import annotations

import json
import os

from agent_repl.bootstrap import close_session, find_resume_source, open_session
from agent_repl.commands import CommandContext, SessionHolder, default_registry
from agent_repl.commands.results import RewindChoices, RewindDone
from agent_repl.context.rewind import BASH_NOT_TRACKED
from agent_repl.core.config.settings import Settings
from agent_repl.core.model.events import ToolResultEvent
from agent_repl.core.permissions.rules import Decision, PermissionRequest
from agent_repl.tools.edit import ambiguous_error, not_read_error, stale_error
from agent_repl.transcript.loader import load_session

from .conftest import read_records


def _steps(app: str, notes: str) -> list[dict]:
    def edit(old: str, new: str) -> dict:
        return {"tools": [{"name": "Edit", "input": {"file_path": app, "old_string": old, "new_string": new}}]}

    read = {"tools": [{"name": "Read", "input": {"file_path": app}}]}
    return [
        edit("x = 1", "x = 2"),  # not read yet
        read,
        edit("= 1", "= 2"),  # occurs twice
        edit("x = 1", "x = 2"),
        {"text": "x is 2 now."},
        edit("y = 1", "y = 5"),  # the file changed on disk since the read
        read,
        edit("y = 1", "y = 5"),
        {"tools": [{"name": "Write", "input": {"file_path": notes, "content": "remember y\n"}}]},
        {"tools": [{"name": "Bash", "input": {"command": "echo bashed > bash.txt"}}]},
        {"text": "y is 5 and the notes are written."},
        {"text": "We are back before the y change."},
    ]


async def _turn(session, prompt: str) -> list[ToolResultEvent]:
    return [e async for e in session.run_turn(prompt) if isinstance(e, ToolResultEvent)]


def _wire_text(body: dict) -> str:
    return json.dumps(body["messages"], ensure_ascii=False)


async def test_an_edit_session_with_a_stale_edit_and_a_rewind(emulator, project, home):
    app, notes = project / "app.py", project / "docs" / "notes.txt"
    app.write_text("x = 1\ny = 1\n")
    emulated = emulator(_steps(str(app), str(notes)))
    asked: list[PermissionRequest] = []

    async def approve(request: PermissionRequest) -> Decision:
        asked.append(request)
        return Decision.ALLOW_ONCE

    settings = Settings(home=home, api_key="sk-ant-test-e2e-key", base_url=emulated.server.base_url)
    session = await open_session(settings, project, ask=approve)
    registry = default_registry()
    holder = SessionHolder(session, None)  # type: ignore[arg-type]
    try:
        first = await _turn(session, "set x to 2")
        assert [e.name for e in first] == ["Edit", "Read", "Edit", "Edit"]
        assert [e.is_error for e in first] == [True, False, True, False]
        assert first[0].message.tool_results()[0].content == not_read_error(app)
        assert first[2].message.tool_results()[0].content == ambiguous_error(app, 2)
        assert app.read_text() == "x = 2\ny = 1\n"
        assert [r.tool_name for r in asked] == ["Edit"], "only the edit that could run was asked"
        structured = first[3].message.tool_use_result
        assert structured["structuredPatch"][0]["lines"] == ["-x = 1", "+x = 2", " y = 1"]

        app.write_text("x = 2\ny = 1\nz = 3\n")  # the user changes it meanwhile
        os.utime(app, ns=(1_000_000_000, 1_000_000_000))
        second = await _turn(session, "set y to 5 and write notes")
        assert [e.name for e in second] == ["Edit", "Read", "Edit", "Write", "Bash"]
        assert second[0].is_error and second[0].message.tool_results()[0].content == stale_error(app)
        assert not any(e.is_error for e in second[1:])
        assert app.read_text() == "x = 2\ny = 5\nz = 3\n"
        assert notes.read_text() == "remember y\n" and (project / "bash.txt").exists()

        ctx = CommandContext(holder, registry)
        choices = await registry.run("/rewind", ctx)
        assert isinstance(choices, RewindChoices)
        assert [t.text for t in choices.targets] == ["set x to 2", "set y to 5 and write notes"]
        assert choices.targets[1].files == ["app.py", "docs/notes.txt"] and choices.targets[1].ran_bash
        done = await registry.run(f"/rewind {choices.targets[1].uuid[:8]} both", ctx)
        assert isinstance(done, RewindDone) and done.level == "info"
        assert done.prompt_text == "set y to 5 and write notes"
        assert "Restored app.py" in done.text and "Removed docs/notes.txt" in done.text
        assert BASH_NOT_TRACKED in done.text
        assert app.read_text() == "x = 2\ny = 1\nz = 3\n", "back to what it was before that prompt"
        assert not notes.exists() and (project / "bash.txt").read_text() == "bashed\n"

        await _turn(session, "where are we?")
        last = emulated.bodies()[-1]
        assert "set x to 2" in _wire_text(last) and "where are we?" in _wire_text(last)
        assert "set y to 5" not in _wire_text(last) and "y = 5" not in _wire_text(last)

        back = await registry.run(f"/rewind {choices.targets[0].uuid} code", ctx)
        assert isinstance(back, RewindDone) and back.prompt_text == ""
        assert app.read_text() == "x = 1\ny = 1\n"
        path = session.sink.path  # type: ignore[attr-defined]
    finally:
        await close_session(session)

    loaded = load_session(path)
    assert loaded.warnings == []
    records = read_records(path)
    snapshots = [r for r in records if r["type"] == "file-history-snapshot"]
    assert len([r for r in snapshots if not r["isSnapshotUpdate"]]) == 3, "one per prompt"
    updates = [r for r in snapshots if r["isSnapshotUpdate"]]
    assert [sorted(r["snapshot"]["trackedFileBackups"]) for r in updates] == [["app.py"], ["app.py", "docs/notes.txt"]]
    assert [(r["restore"], len(r["filesRestored"])) for r in records if r["type"] == "rewind"] == [("both", 2), ("code", 1)]
    edits = [r for r in records if r["type"] == "user" and isinstance(r.get("toolUseResult"), dict) and "oldString" in r["toolUseResult"]]
    assert {tuple(sorted(r["toolUseResult"])) for r in edits} == {
        ("filePath", "newString", "oldString", "originalFile", "replaceAll", "structuredPatch", "userModified")
    }

    # Resumed, the model's view still leaves the rewound turn out; the history keeps it.
    source = find_resume_source(settings, project, str(path), latest=False)
    resumed = await open_session(settings, project, resume=source)
    try:
        view = resumed.projector.project(resumed.messages, dry_run=True).view  # type: ignore[attr-defined]
        texts = [m.text() for m in view if m.type == "user"]
        assert "set y to 5 and write notes" not in texts and "where are we?" in texts
        assert any(m.type == "user" and m.text() == "set y to 5 and write notes" for m in resumed.messages)
        assert resumed.file_history.restore(choices.targets[1].uuid).restored == ["app.py"]
        assert app.read_text() == "x = 2\ny = 1\nz = 3\n"
    finally:
        await close_session(resumed)
