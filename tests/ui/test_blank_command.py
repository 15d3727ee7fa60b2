"""A blank Bash command in the permission question: no crash, no "always" rule, in both front ends."""

from __future__ import annotations

import asyncio
import json

import pytest

from agent_repl.ui.app import AgentApp
from agent_repl.ui.screens.permission import PermissionScreen

from .conftest import emulator_launcher, settings_for
from .helpers import names, wait_for

BLANKS = ["   ", " \t ", "\n"]


def steps(command: str) -> list[dict]:
    return [{"tools": [{"name": "Bash", "input": {"command": command}}]}, {"text": "Done."}]


def tool_result(server) -> dict:
    body = [e.body for e in server.recordings.messages if e.status == 200][-1]
    return next(b for m in body["messages"] if m["role"] == "user" for b in m["content"]
                if isinstance(b, dict) and b.get("type") == "tool_result")  # fmt: skip


@pytest.mark.parametrize("command", BLANKS)
async def test_the_dialog_shows_a_blank_command_and_offers_no_always(emulator, project, home, command):
    server = emulator(steps(command))
    app = AgentApp(emulator_launcher(server, project, home), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen), what="the session")
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), what="the dialog")
        options = [str(o.id) for o in app.screen.query_one("#permission-options").options]
        assert options == ["allow_once", "deny"]
        await pilot.press("a")  # not offered: the dialog stays open
        await pilot.pause()
        assert isinstance(app.screen, PermissionScreen)
        await pilot.press("y")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen), what="the end of the turn")
        assert app.session.permissions.allow == []
    assert not (project / ".agent_repl" / "settings.json").exists()
    assert tool_result(server).get("is_error") is not True


@pytest.mark.timeout(120)
@pytest.mark.parametrize("answer", ["a", "y"])
async def test_the_inline_question_takes_a_blank_command(emulator, project, home, answer):
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from agent_repl.ui.inline import run_inline

    server = emulator(steps("   "))
    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        keys.send_text(f"go\r{answer}\r\x04")
        status = await asyncio.wait_for(run_inline(settings_for(server, home), project, None, first_prompt=None), 60)
    assert status == 0
    assert not (project / ".agent_repl" / "settings.json").exists()
    # `a` is not offered for a blank command, so it answers no; `y` runs it.
    assert tool_result(server).get("is_error", False) is (answer == "a")
    assert json.dumps(tool_result(server))  # the answer reached the model
