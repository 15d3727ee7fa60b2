"""A turn in the app against the emulator: prompt, streamed answer, tool block, permission, result."""

from __future__ import annotations

import json

from agent_repl.core.config.trust import WorkspaceTrust
from agent_repl.core.permissions.rules import Decision
from agent_repl.ui.app import AgentApp
from agent_repl.ui.screens.permission import PermissionScreen
from agent_repl.ui.widgets.messages import AssistantMessageView, NoticeView, ThinkingView, UserMessageView
from agent_repl.ui.widgets.tool_block import ToolBlock

from .conftest import emulator_launcher
from .helpers import event_kinds, names, wait_for

BASH_STEPS = [
    {"text": "Let me run it.", "tools": [{"name": "Bash", "input": {"command": "echo hello-from-bash"}}]},
    {"text": "The command printed **hello-from-bash**."},
]


async def _ready(pilot, seen) -> None:
    await wait_for(pilot, lambda: "SessionReady" in names(seen), what="the session")


async def test_a_turn_streams_asks_permission_runs_the_tool_and_shows_the_result(emulator, project, home):
    server = emulator(BASH_STEPS)
    app = AgentApp(emulator_launcher(server, project, home), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await _ready(pilot, seen)
        await pilot.press(*"run the echo", "enter")
        asked = await wait_for(
            pilot,
            lambda: [m for m in seen if type(m).__name__ == "PermissionAsked"],
            what="the permission prompt",
        )
        assert asked[0].request.tool_name == "Bash" and asked[0].request.key == "echo hello-from-bash"
        assert isinstance(app.screen, PermissionScreen)
        assert app.working.display  # the spinner runs while the modal waits
        await pilot.press("y")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen), what="the end of the turn")
        await pilot.pause()

        # The session's opening context entry is announced before the prompt.
        kinds = [kind for kind in event_kinds(seen) if kind != "entry_appended"]
        assert kinds[0] == "turn_started" and kinds[-1] == "turn_ended"
        assert "text_delta" in kinds
        assert kinds.index("tool_use_started") < kinds.index("tool_result") < len(kinds) - 1
        [finished] = [m for m in seen if type(m).__name__ == "TurnFinished"]
        assert finished.reason == "completed"
        assert not app.working.display

        widgets = [w for w in app.conversation.children if not isinstance(w, NoticeView)]
        # On Sonnet 5.5 the short text before a tool call comes back as thinking; the session asks
        # for its text, so the note shows (dimmed) before the tool block.
        assert [type(w).__name__ for w in widgets] == [
            "UserMessageView",
            "ThinkingView",
            "ToolBlock",
            "AssistantMessageView",
        ]
        prompt, note, tool, answer = widgets
        assert isinstance(note, ThinkingView) and note.item.text == BASH_STEPS[0]["text"]
        assert isinstance(prompt, UserMessageView) and prompt.item.text == "run the echo"
        assert isinstance(tool, ToolBlock)
        assert tool.item.call.name == "Bash" and tool.item.call.result is not None
        assert "hello-from-bash" in tool.item.call.result and not tool.item.call.is_error
        assert isinstance(answer, AssistantMessageView)
        assert answer.source == "The command printed **hello-from-bash**."
        # The status line took the usage of the last request.
        assert app.status.context_tokens > 0 and app.status.cost_usd > 0

    bodies = [e.body for e in server.recordings.messages if e.status == 200]
    assert len(bodies) == 2
    assert "hello-from-bash" in json.dumps(bodies[-1]["messages"][-1])


async def test_always_allow_is_saved_to_the_project_settings_keeping_what_was_there(emulator, project, home):
    settings_file = project / ".agent_repl" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text(json.dumps({"max_retries": 2, "permissions": {"deny": ["Bash(rm:*)"]}}))
    WorkspaceTrust(home).trust(project)  # its max_retries would otherwise wait for the trust question
    server = emulator(BASH_STEPS)
    app = AgentApp(emulator_launcher(server, project, home), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await _ready(pilot, seen)
        await pilot.press(*"go", "enter")
        asked = await wait_for(pilot, lambda: [m for m in seen if type(m).__name__ == "PermissionAsked"])
        await pilot.press("a")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen))
        rule = asked[0].request.always_rule()
        assert rule == "Bash(echo hello-from-bash:*)"
        assert rule in [r.tool + f"({r.spec})" for r in app.session.permissions.allow]
    saved = json.loads(settings_file.read_text())
    assert saved == {"max_retries": 2, "permissions": {"deny": ["Bash(rm:*)"], "allow": [rule]}}


async def test_a_broken_settings_file_is_reported_on_screen_and_the_rule_holds_for_the_session(
    emulator, project, home
):
    server = emulator(BASH_STEPS)
    app = AgentApp(emulator_launcher(server, project, home), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await _ready(pilot, seen)
        settings_file = project / ".agent_repl" / "settings.json"
        settings_file.parent.mkdir()
        settings_file.write_text("{not json")
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: "PermissionAsked" in names(seen))
        await pilot.press("a")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen))
        errors = [w for w in app.conversation.query(NoticeView) if w.has_class("-error")]
        assert errors and "not valid JSON" in str(errors[0].render())
        assert settings_file.read_text() == "{not json"
        tool = app.conversation.query_one(ToolBlock)
        assert "hello-from-bash" in (tool.item.call.result or "")


async def test_deny_tells_the_model_and_escape_in_the_modal_rejects_and_stops_the_turn(emulator, project, home):
    server = emulator(BASH_STEPS)
    app = AgentApp(emulator_launcher(server, project, home), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await _ready(pilot, seen)
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen))
        tool = app.conversation.query_one(ToolBlock)
        # Esc in the question refuses the call and stops the turn (Claude Code's behaviour).
        result = tool.item.call.result or ""
        assert tool.item.call.is_error and "rejected" in result and "stopped the turn" in result
    assert not (project / ".agent_repl").exists()
    assert Decision.DENY.value == "deny"


async def test_escape_interrupts_a_stalled_turn_and_the_next_prompt_works(emulator, project, home):
    server = emulator([{"text": "This reply stalls half way through its stream."}, {"text": "Back again."}])
    server.faults.stall_seconds = 30
    server.faults.next("stall")
    app = AgentApp(emulator_launcher(server, project, home, max_retries=0), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await _ready(pilot, seen)
        await pilot.press(*"first", "enter")
        await wait_for(pilot, lambda: "context_projected" in event_kinds(seen), what="the request")
        await pilot.pause(0.2)
        await pilot.press("escape")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen), what="the interruption")
        [finished] = [m for m in seen if type(m).__name__ == "TurnFinished"]
        assert finished.reason == "interrupted"
        history = app.session.messages
        assert history[-1].type == "user" and "interrupted" in history[-1].text()
        assert any(w.item.text == "interrupted" for w in app.conversation.query(NoticeView) if w.item)

        seen.clear()
        await pilot.press(*"second", "enter")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen))
        # The stalled step never completed, so the script answers it again, whole this time.
        [finished] = [m for m in seen if type(m).__name__ == "TurnFinished"]
        assert finished.reason == "completed"
        last = app.conversation.query(AssistantMessageView).last()
        assert last.source == "This reply stalls half way through its stream."


async def test_during_a_turn_cost_answers_at_once_and_clear_waits_its_turn(emulator, project, home):
    server = emulator([{"text": "Slow reply."}])
    server.faults.stall_seconds = 30
    server.faults.next("stall")
    app = AgentApp(emulator_launcher(server, project, home, max_retries=0), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await _ready(pilot, seen)
        first_id = app.session.session_id
        await pilot.press(*"first", "enter")
        await wait_for(pilot, lambda: "context_projected" in event_kinds(seen))
        await pilot.press(*"/cost", "enter")
        done = await wait_for(pilot, lambda: [m for m in seen if type(m).__name__ == "CommandFinished"])
        assert done[0].line == "/cost" and app.turn_running
        await pilot.press(*"/clear", "enter")
        await pilot.pause(0.2)
        assert app.pending == ["/clear"] and app.session.session_id == first_id
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.session.session_id != first_id, what="the queued /clear")
        assert [m.line for m in seen if type(m).__name__ == "CommandFinished"] == ["/cost", "/clear"]
