"""UserPromptSubmit, Notification, SessionEnd and /hooks through a real session on the emulator."""

from __future__ import annotations

from agent_repl.bootstrap import close_session, open_session
from agent_repl.commands import CommandContext, SessionHolder, default_registry
from agent_repl.core.model.events import SystemMessageEvent, TurnEnded
from agent_repl.core.model.messages import UserMessage
from agent_repl.core.permissions.rules import Decision
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

from .compaction_support import run, settings_for
from .conftest import read_records
from .hook_support import assert_documented_input, hook_script, hooks_setting, logged_inputs

REFUSE_SECRETS = """
if "password" in data["prompt"]:
    print("prompts must not carry passwords", file=sys.stderr)
    sys.exit(2)
print("The user prefers short answers.")
"""


async def test_a_user_prompt_submit_hook_refuses_a_prompt_and_adds_context_to_the_others(tmp_path):
    hooks = tmp_path / "hooks"
    command = hook_script(hooks, "prompt", REFUSE_SECRETS)
    server = EmulatorServer(policy=ScriptPolicy({"steps": [{"text": "Short answer."}]})).start()
    settings = settings_for(server, tmp_path, hooks=hooks_setting("UserPromptSubmit", command))
    session = await open_session(settings, tmp_path)
    try:
        refused = await run(session, "my password is hunter2, log in")
        answered = await run(session, "what is 2+2?")
    finally:
        await close_session(session)
        server.stop()
    assert isinstance(refused[-1], TurnEnded) and refused[-1].reason == "hook_stopped"
    notices = [e.message.content for e in refused if isinstance(e, SystemMessageEvent)]
    assert notices == ["The prompt was not sent: UserPromptSubmit hook: prompts must not carry passwords"]
    assert answered[-1].reason == "completed"
    [body] = [e.body for e in server.recordings.messages if e.status == 200]
    sent = str(body["messages"])
    assert "hunter2" not in sent and "The user prefers short answers." in sent
    assert sent.index("what is 2+2?") < sent.index("The user prefers short answers.")
    assert not any(isinstance(m, UserMessage) and "hunter2" in m.text() for m in session.messages)
    assert "hunter2" not in session.sink.path.read_text()
    for data in logged_inputs(hooks):
        assert_documented_input(data)


async def test_notification_and_session_end_hooks_and_the_hooks_command(tmp_path):
    hooks = tmp_path / "hooks"
    notify = hook_script(hooks, "notify", "pass")
    end = hook_script(hooks, "end", "sys.exit(1)")
    settings_hooks = {**hooks_setting("Notification", notify, matcher="permission_prompt"),
                      **hooks_setting("SessionEnd", end)}
    steps = [{"tools": [{"name": "Bash", "input": {"command": "echo hi"}}]}, {"text": "Said hi."}]
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps})).start()
    settings = settings_for(server, tmp_path, skip_permissions=False, hooks=settings_hooks)
    asked = []

    async def ask(request):
        asked.append(request.tool_name)
        return Decision.ALLOW_ONCE

    session = await open_session(settings, tmp_path, ask=ask)
    registry = default_registry()
    try:
        await run(session, "say hi")
        for task in list(session.hooks.background):
            await task
        listing = await registry.run("/hooks", CommandContext(SessionHolder(session, None), registry))  # type: ignore[arg-type]
    finally:
        await close_session(session, "prompt_input_exit")
        server.stop()
    assert asked == ["Bash"]
    notified, ended = logged_inputs(hooks)
    assert notified["notification_type"] == "permission_prompt" and "Bash" in notified["message"]
    assert ended["reason"] == "prompt_input_exit"
    for data in (notified, ended):
        assert_documented_input(data)
    assert "Notification:permission_prompt (user, timeout 30 s)" in listing.text
    assert "last: exit 0 in" in listing.text and "SessionEnd (user, timeout 30 s)" in listing.text
    assert "not run yet" in listing.text  # SessionEnd had not run when /hooks was asked
    # SessionEnd failed (exit 1): the one line is kept in the transcript.
    records = read_records(session.sink.path)
    assert any("SessionEnd hook failed with exit code 1" in str(r.get("content")) for r in records)
