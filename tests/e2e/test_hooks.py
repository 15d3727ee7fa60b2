"""Hooks through the real loop, against the emulator over HTTP with the real client: each asserted on
the wire the emulator recorded and in the transcript on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.loop.compact import compact_now
from agent_repl.core.loop.hooks import MAX_STOP_HOOK_BLOCKS
from agent_repl.core.model.events import LoopContinued, SystemMessageEvent, TurnEnded
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer

from .compaction_support import RICH_FILES, run, settings_for
from .conftest import read_records
from .hook_support import assert_documented_input, hook_script, hooks_setting, logged_inputs
from .test_compaction import reading_steps


def server_for(steps: list[dict[str, Any]]) -> EmulatorServer:
    return EmulatorServer(policy=ScriptPolicy({"steps": steps}), summarizer=AgentSummarizer()).start()


def bodies(server: EmulatorServer) -> list[dict[str, Any]]:
    return [e.body for e in server.recordings.messages if e.status == 200]


def wire_text(message: dict[str, Any]) -> str:
    parts = []
    for block in message["content"]:
        if block["type"] == "text":
            parts.append(block["text"])
        elif block["type"] == "tool_result":
            content = block["content"]
            parts.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
    return "\n".join(parts)


def attachments(records: list[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    return [r["attachment"] for r in records if r["type"] == "attachment" and r["attachment"]["hookEvent"] == event]


DENY_RM = """
command = data["tool_input"].get("command", "")
if command.split()[:1] == ["rm"]:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                      "permissionDecisionReason": "rm is not allowed here; move files to trash/ instead"}}))
"""


async def test_a_pre_tool_use_hook_denies_rm_and_the_model_gets_its_reason(tmp_path):
    (tmp_path / "important.txt").write_text("keep me\n")
    hooks = tmp_path / "hooks"
    command = hook_script(hooks, "deny_rm", DENY_RM)
    steps = [
        {"text": "Cleaning up.", "tools": [{"name": "Bash", "input": {"command": "rm -f important.txt"}}]},
        {"text": "Listing instead.", "tools": [{"name": "Bash", "input": {"command": "ls"}}]},
        {"text": "Left the file alone."},
    ]
    server = server_for(steps)
    # Permissions are skipped: the hook alone stands between the model and the file.
    settings = settings_for(server, tmp_path, hooks=hooks_setting("PreToolUse", command, matcher="Bash"))
    session = await open_session(settings, tmp_path)
    try:
        events = await run(session, "tidy the folder")
    finally:
        await close_session(session)
        server.stop()
    assert events[-1].reason == "completed"
    assert (tmp_path / "important.txt").read_text() == "keep me\n"
    denied = bodies(server)[1]["messages"][-1]
    result = denied["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert "rm is not allowed here; move files to trash/ instead" in wire_text(denied)
    # The hook let `ls` through: it ran and its output reached the model.
    assert "important.txt" in wire_text(bodies(server)[2]["messages"][-1])
    records = read_records(session.sink.path)
    results = [r for r in records if r["type"] == "user" and isinstance(r["message"]["content"], list)]
    assert "rm is not allowed here" in json.dumps(results[0]["message"]["content"])
    inputs = logged_inputs(hooks)
    assert [i["tool_input"]["command"] for i in inputs] == ["rm -f important.txt", "ls"]
    for data in inputs:
        assert_documented_input(data)
        assert data["tool_name"] == "Bash" and data["tool_use_id"].startswith("toolu_")
        assert data["transcript_path"] == str(session.sink.path) and data["permission_mode"] == "bypassPermissions"


async def test_a_hooks_allow_does_not_override_a_deny_rule(tmp_path):
    (tmp_path / "important.txt").write_text("keep me\n")
    allow = hook_script(tmp_path / "hooks", "allow", 'print(json.dumps({"hookSpecificOutput": '
                        '{"hookEventName": "PreToolUse", "permissionDecision": "allow"}}))')
    steps = [{"tools": [{"name": "Bash", "input": {"command": "rm -f important.txt"}}]}, {"text": "Could not."}]
    server = server_for(steps)
    settings = settings_for(
        server, tmp_path, skip_permissions=False, permissions={"deny": ["Bash(rm:*)"]},
        hooks=hooks_setting("PreToolUse", allow, matcher="Bash"),
    )
    session = await open_session(settings, tmp_path)
    try:
        await run(session, "tidy")
    finally:
        await close_session(session)
        server.stop()
    assert (tmp_path / "important.txt").exists()
    assert "denied by Bash(rm:*)" in wire_text(bodies(server)[1]["messages"][-1])


FORMAT_AFTER_EDIT = """
path = pathlib.Path(data["tool_input"]["file_path"])
text = path.read_text()
path.write_text("\\n".join(line.rstrip() for line in text.splitlines()) + "\\n")
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                  "additionalContext": f"formatted {path.name} (trailing spaces removed)"}}))
"""


async def test_a_post_tool_use_hook_formats_the_file_after_edit_and_the_model_hears_it(tmp_path):
    target = tmp_path / "app.py"
    target.write_text("def main():\n    return 1\n")
    hooks = tmp_path / "hooks"
    command = hook_script(hooks, "format", FORMAT_AFTER_EDIT)
    edit = {"file_path": str(target), "old_string": "return 1", "new_string": "return 2   "}
    steps = [
        {"tools": [{"name": "Read", "input": {"file_path": str(target)}}]},
        {"tools": [{"name": "Edit", "input": edit}]},
        {"text": "Edited and formatted."},
    ]
    server = server_for(steps)
    settings = settings_for(server, tmp_path, hooks=hooks_setting("PostToolUse", command, matcher="Edit|Write"))
    session = await open_session(settings, tmp_path)
    try:
        await run(session, "return 2 from main")
    finally:
        await close_session(session)
        server.stop()
    assert target.read_text() == "def main():\n    return 2\n"
    # The hook ran for the Edit only (the matcher), after the edit, and saw its structured result.
    inputs = logged_inputs(hooks)
    assert [i["tool_name"] for i in inputs] == ["Edit"]
    assert_documented_input(inputs[0])
    assert inputs[0]["tool_response"]["filePath"] == str(target)
    after_edit = bodies(server)[2]["messages"][-1]
    assert after_edit["content"][0]["type"] == "tool_result"
    assert "formatted app.py (trailing spaces removed)" in after_edit["content"][-1]["text"]
    [attachment] = attachments(read_records(session.sink.path), "PostToolUse")
    assert attachment["type"] == "hook_additional_context"
    assert attachment["hookName"] == "PostToolUse:Edit|Write"
    assert attachment["content"] == ["formatted app.py (trailing spaces removed)"]
    assert attachment["toolUseID"] == after_edit["content"][0]["tool_use_id"]


RUN_THE_TESTS_FIRST = """
if not data["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "run the tests first"}))
"""


async def test_a_stop_hook_sends_the_model_back_once_and_the_second_stop_ends_the_turn(tmp_path):
    hooks = tmp_path / "hooks"
    command = hook_script(hooks, "stop", RUN_THE_TESTS_FIRST)
    steps = [
        {"text": "All done."},
        {"text": "Running them.", "tools": [{"name": "Bash", "input": {"command": "echo 3 passed"}}]},
        {"text": "3 tests pass; done."},
    ]
    server = server_for(steps)
    settings = settings_for(server, tmp_path, hooks=hooks_setting("Stop", command))
    session = await open_session(settings, tmp_path)
    try:
        events = await run(session, "fix the bug")
    finally:
        await close_session(session)
        server.stop()
    ended = events[-1]
    assert isinstance(ended, TurnEnded) and ended.reason == "completed" and ended.num_requests == 3
    assert [e.transition for e in events if isinstance(e, LoopContinued)] == ["stop_hook_blocking"]
    sent_back = bodies(server)[1]["messages"]
    assert sent_back[-2]["content"][-1]["text"] == "All done."
    assert "run the tests first" in wire_text(sent_back[-1])
    assert [i["stop_hook_active"] for i in logged_inputs(hooks)] == [False, True]
    for data in logged_inputs(hooks):
        assert_documented_input(data)
    records = read_records(session.sink.path)
    summaries = [r for r in records if r.get("subtype") == "stop_hook_summary"]
    assert [s["hookErrors"] for s in summaries] == [["run the tests first"], []]
    for summary in summaries:
        assert summary["hookCount"] == 1 and summary["hookInfos"] == [{"command": command}]
        assert summary["level"] == "suggestion" and summary["preventedContinuation"] is False
    [feedback] = [a for a in attachments(records, "Stop")]
    assert feedback["type"] == "hook_blocking_error" and feedback["content"] == ["run the tests first"]
    assert any(isinstance(e, SystemMessageEvent) and "sent the model back" in e.message.content for e in events)


async def test_a_stop_hook_that_always_blocks_is_capped_and_the_turn_ends_with_a_warning(tmp_path):
    command = hook_script(tmp_path / "hooks", "stop", 'print("not yet", file=sys.stderr)\nsys.exit(2)')
    server = server_for([{"text": f"Done ({n})."} for n in range(MAX_STOP_HOOK_BLOCKS + 2)])
    settings = settings_for(server, tmp_path, hooks=hooks_setting("Stop", command))
    session = await open_session(settings, tmp_path)
    try:
        events = await run(session, "finish")
    finally:
        await close_session(session)
        server.stop()
    assert events[-1].reason == "completed" and events[-1].num_requests == MAX_STOP_HOOK_BLOCKS + 1
    assert len([e for e in events if isinstance(e, LoopContinued)]) == MAX_STOP_HOOK_BLOCKS
    warnings = [e.message.content for e in events if isinstance(e, SystemMessageEvent) and e.message.level == "warning"]
    assert warnings == [f"Stop hooks sent the model back {MAX_STOP_HOOK_BLOCKS} times in a row; the turn ends here."]
    # Exit code 2: stderr is what the model was told each time.
    assert "not yet" in wire_text(bodies(server)[1]["messages"][-1])


async def test_a_session_start_hook_puts_its_context_in_the_first_request(tmp_path):
    hooks = tmp_path / "hooks"
    context = 'print("Team rule: every change needs a test. Branch: feature/x")'
    command = hook_script(hooks, "start", context)
    server = server_for([{"text": "Understood."}])
    settings = settings_for(server, tmp_path, hooks=hooks_setting("SessionStart", command, matcher="startup|resume"))
    session = await open_session(settings, tmp_path)
    try:
        await run(session, "hello")
        await run(session, "again")
    finally:
        await close_session(session)
        server.stop()
    first = bodies(server)[0]["messages"]
    text = wire_text(first[0])
    assert "Team rule: every change needs a test. Branch: feature/x" in text
    assert text.index("Team rule") < text.index("hello")
    [data] = logged_inputs(hooks)  # once per session, not per turn
    assert_documented_input(data)
    assert data["source"] == "startup"
    [attachment] = attachments(read_records(session.sink.path), "SessionStart")
    assert attachment["hookName"] == "SessionStart:startup|resume"
    assert attachment["content"] == ["Team rule: every change needs a test. Branch: feature/x"]


async def test_pre_compact_output_follows_the_kept_messages_and_attachments_after_compaction(tmp_path):
    hooks = tmp_path / "hooks"
    command = hook_script(hooks, "precompact", 'print("Saved the open questions to notes/pre-compact.md")')
    server = server_for([*reading_steps(3), {"text": "Carrying on."}])
    settings = settings_for(server, tmp_path, api_compaction=False, hooks=hooks_setting("PreCompact", command))
    session = await open_session(settings, tmp_path)
    try:
        for turn in range(3):
            await run(session, f"Turn {turn}: look at {RICH_FILES[turn].name}")
        requests_before = len(server.recordings.messages)
        assert await compact_now(session, "manual", "focus on the files").run_to_end() is True
        # The hook ran before the summary request was sent.
        assert len(server.recordings.messages) == requests_before + 1
        await run(session, "what next?")
    finally:
        await close_session(session)
        server.stop()
    [data] = logged_inputs(hooks)
    assert_documented_input(data)
    assert data["trigger"] == "manual" and data["custom_instructions"] == "focus on the files"
    records = read_records(session.sink.path)
    boundary = next(r for r in records if r.get("subtype") == "compact_boundary")
    reinjected_uuids = boundary["compactMetadata"]["attachmentUuids"]
    reinjected = [m.text() for m in session.messages if m.uuid in reinjected_uuids]
    assert reinjected  # the files read before compaction come back as attachments
    first_after = bodies(server)[-1]["messages"]
    texts = [block.get("text", "") for message in first_after for block in message["content"]]
    summary = next(i for i, t in enumerate(texts) if t.startswith("This session is being continued"))
    kept = texts.index(f"Read {RICH_FILES[2].name}; nothing odd.")
    attached = [texts.index(text) for text in reinjected]
    hook_output = next(i for i, t in enumerate(texts) if "Saved the open questions to notes/pre-compact.md" in t)
    prompt = next(i for i, t in enumerate(texts) if "what next?" in t)
    assert summary < kept < min(attached) <= max(attached) < hook_output < prompt
    [attachment] = attachments(records, "PreCompact")
    assert attachment["type"] == "hook_additional_context"
    assert attachment["content"] == ["Saved the open questions to notes/pre-compact.md"]
    position = {r.get("uuid"): i for i, r in enumerate(records)}
    hook_uuid = next(r["uuid"] for r in records if r.get("attachment") is attachment)
    assert all(position[u] < position[hook_uuid] for u in [boundary["uuid"], *reinjected_uuids])


async def test_hook_records_load_back_and_send_the_same_bytes(tmp_path):
    command = hook_script(tmp_path / "hooks", "start", 'print("Remember: Python 3.12 only.")')
    server = server_for([{"text": "Ok."}, {"text": "Still ok."}])
    settings = settings_for(server, tmp_path, hooks=hooks_setting("SessionStart", command))
    session = await open_session(settings, tmp_path)
    try:
        await run(session, "hi")
    finally:
        await close_session(session)
    from agent_repl.bootstrap import find_resume_source

    source = find_resume_source(settings, tmp_path, session.session_id, latest=False)
    resumed = await open_session(settings, tmp_path, resume=source)
    try:
        assert resumed.start_source == "resume"
        await run(resumed, "and now?")
    finally:
        await close_session(resumed)
        server.stop()
    first, second = bodies(server)
    # The resumed request starts with the same bytes; the resume ran SessionStart:resume too.
    assert json.dumps(second["messages"][0]["content"][:3]) == json.dumps(first["messages"][0]["content"][:3])
    assert Path(tmp_path / "hooks" / "inputs.jsonl").read_text().count('"source": "resume"') == 1


async def test_a_sub_agent_stop_runs_subagent_stop_hooks_and_the_main_stop_runs_stop(tmp_path):
    hooks = tmp_path / "hooks"
    stop = hook_script(hooks, "stop", "pass")
    sub_stop = hook_script(hooks, "substop", 'if not data["stop_hook_active"]:\n'
                           '    print(json.dumps({"decision": "block", "reason": "cite the file"}))')
    main = [{"tools": [{"name": "Task", "input": {"description": "Look", "prompt": "AGENT-S: find the TODO"}}]},
            {"text": "The sub-agent found it."}]
    agents = [{"prompt": "AGENT-S", "steps": [{"text": "There is a TODO."}, {"text": "There is a TODO in app.py."}]}]
    server = EmulatorServer(policy=ScriptPolicy({"steps": main, "agents": agents})).start()
    settings_hooks = {**hooks_setting("Stop", stop), **hooks_setting("SubagentStop", sub_stop),
                      **hooks_setting("UserPromptSubmit", stop)}
    settings = settings_for(server, tmp_path, web_tools=False, hooks=settings_hooks)
    session = await open_session(settings, tmp_path)
    try:
        events = await run(session, "look for TODOs")
    finally:
        await close_session(session)
        server.stop()
    assert events[-1].reason == "completed"
    inputs = logged_inputs(hooks)
    for data in inputs:
        assert_documented_input(data)
    # The user's prompt once (not the sub-agent's), the sub-agent's two stops, then the main stop.
    assert [i["hook_event_name"] for i in inputs] == ["UserPromptSubmit", "SubagentStop", "SubagentStop", "Stop"]
    first, second = inputs[1], inputs[2]
    assert [first["stop_hook_active"], second["stop_hook_active"]] == [False, True]
    assert first["agent_id"] and first["agent_transcript_path"].endswith(f"agent-{first['agent_id']}.jsonl")
    result = next(m for m in session.messages if m.type == "user" and m.tool_results())
    assert "There is a TODO in app.py." in result.tool_results()[0].text()
