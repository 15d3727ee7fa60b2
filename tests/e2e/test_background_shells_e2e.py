"""Background commands through the real loop against the emulator: Bash with run_in_background
(asked like any Bash call), BashOutput, KillShell, the task notification on the next request,
and the session's end killing what still runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.config.settings import Settings
from agent_repl.core.model.events import ToolResultEvent
from agent_repl.core.permissions.rules import Decision, PermissionRequest

from .conftest import agent_env, run_agent


async def _turn(session, prompt: str) -> list[ToolResultEvent]:
    return [e async for e in session.run_turn(prompt) if isinstance(e, ToolResultEvent)]


def _result_text(event: ToolResultEvent) -> str:
    content = event.message.tool_results()[0].content
    return content if isinstance(content, str) else json.dumps(content)


async def test_background_commands_through_the_loop(emulator, project, home):
    steps = [
        {"tools": [{"name": "Bash", "input": {"command": "echo ready; sleep 0.3; echo done", "description": "Warm up",
                                               "run_in_background": True}}]},
        {"text": "Started."},
        {"tools": [{"name": "BashOutput", "input": {"bash_id": "bash_1"}}]},
        {"text": "It said ready and done."},
        {"tools": [{"name": "Bash", "input": {"command": "sleep 60", "run_in_background": True}},
                   {"name": "Bash", "input": {"command": "sleep 60", "run_in_background": True}}]},
        {"tools": [{"name": "KillShell", "input": {"shell_id": "bash_2"}}]},
        {"text": "One stopped, one left."},
    ]
    emulated = emulator(steps)
    asked: list[PermissionRequest] = []

    async def approve(request: PermissionRequest) -> Decision:
        asked.append(request)
        return Decision.ALLOW_ONCE

    settings = Settings(home=home, api_key="sk-ant-test-e2e-key", base_url=emulated.server.base_url)
    session = await open_session(settings, project, ask=approve)
    closed = False
    try:
        first = await _turn(session, "start the warm-up in the background")
        assert [e.name for e in first] == ["Bash"]
        assert "Command running in background with ID: bash_1" in _result_text(first[0])
        assert [(r.tool_name, r.key) for r in asked] == [("Bash", "echo ready; sleep 0.3; echo done")]
        shell = session.shells.shells["bash_1"]
        for _ in range(200):
            if shell.status != "running":
                break
            await asyncio.sleep(0.05)
        assert shell.status == "completed"

        second = await _turn(session, "how did it go?")
        assert [e.name for e in second] == ["BashOutput"]
        assert "ready\ndone" in _result_text(second[0]) and "<status>completed</status>" in _result_text(second[0])
        bodies = emulated.bodies()
        announced = [json.dumps(b["messages"]).count("<task-id>bash_1</task-id>") for b in bodies]
        # Not before it ended; once on the next prompt's request, and then it stays in the history.
        assert announced == [0, 0, 1, 1]

        third = await _turn(session, "start two servers, stop the first")
        assert [e.name for e in third] == ["Bash", "Bash", "KillShell"]
        assert "Killed background shell bash_2" in _result_text(third[2])
        statuses = {k: s.status for k, s in session.shells.shells.items()}
        assert statuses == {"bash_1": "completed", "bash_2": "killed", "bash_3": "running"}
        assert "BashOutput" not in [r.tool_name for r in asked] and "KillShell" not in [r.tool_name for r in asked]
        last = emulated.bodies()[-1]
        assert json.dumps(last["messages"]).count("<task-notification>") == 1, "announced once, never again"
        await close_session(session)
        closed = True
        assert session.shells.shells["bash_3"].status == "killed"
    finally:
        if not closed:
            await close_session(session)


def test_print_mode_kills_its_background_commands_on_the_way_out(emulator, project, home):
    emulated = emulator([
        {"tools": [{"name": "Bash", "input": {"command": "echo $$ > shell.pid; sleep 60", "run_in_background": True}}]},
        {"tools": [{"name": "Bash", "input": {"command": "sleep 0.3; cat shell.pid"}}]},
        {"text": "Left a sleeper running."},
    ])
    done = run_agent(["-p", "start a sleeper", "--allowed-tools", "Bash"], cwd=project, env=agent_env(emulated, home))
    assert done.returncode == 0, done.stderr
    assert "Left a sleeper running." in done.stdout
    pid = int((project / "shell.pid").read_text())
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        alive = fields[0] != "Z"
    except OSError:
        alive = False
    assert not alive, "the background command outlived the print-mode run"
