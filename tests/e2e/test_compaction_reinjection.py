"""After a compaction, the next request holds the todo list, the approved plan and the recently
edited files (within the re-injection budget), through the real loop against the emulator."""

from __future__ import annotations

import json
from pathlib import Path

from agent_repl.bootstrap import close_session, open_session
from agent_repl.context.attachments import MAX_TOKENS_PER_FILE, plan_reminder
from agent_repl.core.loop.compact import compact_now
from agent_repl.core.model.todos import parse_todos, todo_reminder
from agent_repl.core.permissions.mode import PermissionMode
from agent_repl.core.permissions.rules import Decision
from agent_repl.emulator.policies import CallablePolicy, ScriptPolicy
from agent_repl.emulator.policies.base import summary_reply
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer

from .compaction_support import run, settings_for

TODOS = [
    {"content": "Rename the helper", "status": "completed", "activeForm": "Renaming the helper"},
    {"content": "Update the callers", "status": "in_progress", "activeForm": "Updating the callers"},
]
PLAN = "## Plan\n1. Rename `helper` to `assist` everywhere\n2. Run the tests"


def _policy(steps: list[dict]) -> CallablePolicy:
    script = ScriptPolicy({"steps": steps})

    def reply(request):  # type: ignore[no-untyped-def]
        kind = request_kind(request.body)
        return summary_reply(request, kind) if kind else script.reply(request)

    policy = CallablePolicy(reply)
    policy.completed = script.completed  # type: ignore[method-assign]
    return policy


async def test_todos_plan_and_edited_files_come_back_after_a_compaction(tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    small, big = project / "helper.py", project / "big.py"
    small.write_text("def helper():\n    return 1\n")
    big.write_text("".join(f"VALUE_{i} = {i}  # a line of a long generated module\n" for i in range(1_000)))
    steps = [
        {"tools": [{"name": "Read", "input": {"file_path": str(small)}}, {"name": "Read", "input": {"file_path": str(big)}}]},
        {"tools": [{"name": "Edit", "input": {"file_path": str(small), "old_string": "def helper", "new_string": "def assist"}}]},
        {"tools": [{"name": "Edit", "input": {"file_path": str(big), "old_string": "VALUE_0 = 0 ", "new_string": "VALUE_0 = 100 "}}]},
        {"tools": [{"name": "TodoWrite", "input": {"todos": TODOS}}]},
        {"text": "Renamed; the callers are next."},
        {"tools": [{"name": "ExitPlanMode", "input": {"plan": PLAN}}]},
        {"text": "Following the plan."},
        {"text": "Still on it after the compaction."},
    ]
    server = EmulatorServer(policy=_policy(steps), summarizer=AgentSummarizer())
    server.start()

    async def approve(request):  # type: ignore[no-untyped-def]
        return Decision.ALLOW_ALWAYS if request.tool_name == "ExitPlanMode" else Decision.ALLOW_ONCE

    settings = settings_for(server, tmp_path, skip_permissions=False)
    session = await open_session(settings, project, ask=approve)
    try:
        await run(session, "rename helper to assist")
        session.mode.set(PermissionMode.PLAN)
        await run(session, "now plan the callers")
        assert session.permission_mode is PermissionMode.ACCEPT_EDITS
        assert await compact_now(session, "manual").run_to_end() is True
        await run(session, "carry on")
        bodies = [e.body for e in server.recordings.messages if e.status == 200]
        last = json.dumps(bodies[-1]["messages"], ensure_ascii=False)
    finally:
        await close_session(session)
        server.stop()

    assert json.dumps(todo_reminder(parse_todos(TODOS) or []), ensure_ascii=False)[1:-1] in last
    assert "The plan the user approved before the conversation was compacted" in last
    assert json.dumps(PLAN)[1:-1] in last
    reinjected = [
        block["text"]
        for message in bodies[-1]["messages"]
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "text" and "was read or edited before the conversation was compacted" in block["text"]
    ]
    assert len(reinjected) == 2
    small_text = next(t for t in reinjected if str(small) in t)
    assert "1\tdef assist():" in small_text, "the edited file comes back as it is now"
    big_text = next(t for t in reinjected if str(big) in t)
    assert "1\tVALUE_0 = 100" in big_text and "[... truncated; Read the file for the rest]" in big_text
    # Within the per-file budget (characters are a generous upper bound of tokens here).
    assert len(big_text) < MAX_TOKENS_PER_FILE * 5


async def test_paths_searched_and_run_before_a_compaction_are_listed_after_it(tmp_path: Path):
    # The summary lists only what the calls read; the list after it names what they searched and ran,
    # and still names it after a second compaction summarized the first one's list away.
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "engine.py").write_text("def start():\n    return 1\n")
    steps = [
        {"tools": [{"name": "Grep", "input": {"pattern": "def start", "path": str(project / "pkg")}}]},
        {"tools": [{"name": "Bash", "input": {"command": "python scripts/check_engine.py pkg/engine.py"}}]},
        {"text": "Found it."},
        {"text": "Still here after the first compaction."},
        {"text": "And after the second."},
    ]
    server = EmulatorServer(policy=_policy(steps), summarizer=AgentSummarizer())
    server.start()
    session = await open_session(settings_for(server, tmp_path), project)
    try:
        await run(session, "where does the engine start?")
        assert await compact_now(session, "manual").run_to_end() is True
        await run(session, "carry on")
        first = json.dumps(server.recordings.messages[-1].body["messages"], ensure_ascii=False)
        assert await compact_now(session, "manual").run_to_end() is True
        await run(session, "and again")
        second = json.dumps(server.recordings.messages[-1].body["messages"], ensure_ascii=False)
    finally:
        await close_session(session)
        server.stop()

    for last in (first, second):
        assert "Paths the tool calls named before the conversation was compacted" in last
        for path in (str(project / "pkg"), "scripts/check_engine.py", "pkg/engine.py"):
            assert path in last


async def test_the_todo_list_and_the_plan_survive_a_second_compaction(tmp_path: Path):
    # After the first compaction the TodoWrite and ExitPlanMode calls are summarized away; the second
    # compaction still puts the list and the plan back, whatever the summary kept.
    project = tmp_path / "project"
    project.mkdir()
    steps = [
        {"tools": [{"name": "TodoWrite", "input": {"todos": TODOS}}]},
        {"tools": [{"name": "ExitPlanMode", "input": {"plan": PLAN}}]},
        {"text": "Planned."},
        {"text": "Still here after the first compaction."},
        {"text": "And after the second."},
    ]
    server = EmulatorServer(policy=_policy(steps), summarizer=AgentSummarizer())
    server.start()

    async def approve(request):  # type: ignore[no-untyped-def]
        return Decision.ALLOW_ALWAYS if request.tool_name == "ExitPlanMode" else Decision.ALLOW_ONCE

    session = await open_session(settings_for(server, tmp_path, skip_permissions=False), project, ask=approve)
    try:
        session.mode.set(PermissionMode.PLAN)
        await run(session, "plan the rename")
        assert await compact_now(session, "manual").run_to_end() is True
        await run(session, "carry on")
        assert await compact_now(session, "manual").run_to_end() is True
        await run(session, "and again")
        last = json.dumps(server.recordings.messages[-1].body["messages"], ensure_ascii=False)
    finally:
        await close_session(session)
        server.stop()

    assert json.dumps(todo_reminder(parse_todos(TODOS) or []), ensure_ascii=False)[1:-1] in last
    assert json.dumps(plan_reminder(PLAN), ensure_ascii=False)[1:-1] in last
