"""`--permission-mode dontAsk` in a session that could ask (the app, an SDK's can_use_tool): the
question is never put, and a call no rule allows is refused. In-process, the emulator as the model."""

from __future__ import annotations

from pathlib import Path

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.config.settings import load_settings
from agent_repl.core.permissions.rules import Decision, PermissionRequest
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

STEPS = [{"tools": [{"name": "Bash", "input": {"command": "touch made.txt"}}]}, {"text": "Done."}]


async def _run(project: Path, home: Path, *, dont_ask: bool) -> list[str]:
    server = EmulatorServer(policy=ScriptPolicy({"steps": STEPS}))
    server.start()
    asked: list[str] = []

    async def ask(request: PermissionRequest) -> Decision:
        asked.append(request.key)
        return Decision.ALLOW_ONCE

    env = {"AGENT_REPL_HOME": str(home), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "k"}
    settings = load_settings(cwd=project, env=env, overrides={"dont_ask": dont_ask, "web_tools": False})
    session = await open_session(settings, project, ask=ask)
    try:
        assert session.permission_mode_name == ("dontAsk" if dont_ask else "default")
        [_ async for _ in session.run_turn("make it")]
    finally:
        await close_session(session)
        server.stop()
    return asked


async def test_dont_ask_refuses_without_asking_and_default_asks(project: Path, home: Path):
    assert await _run(project, home, dont_ask=True) == []
    assert not (project / "made.txt").exists()
    assert await _run(project, home, dont_ask=False) == ["touch made.txt"]
    assert (project / "made.txt").exists()
