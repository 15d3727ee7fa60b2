"""Workspace trust: a cloned repository's `.agent_repl/settings.json` cannot approve itself.

Its allow rules count only after the user trusted the folder once (the TUI's dialog or the
inline question, remembered in the agent's home), or for one run with `--trust-project`; print
mode ignores them with one warning line. Its deny rules always apply.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_repl.core.config.settings import load_settings
from agent_repl.core.config.trust import TRUST_FILE, WorkspaceTrust
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

from .support import result_text


@pytest.fixture
def cloned(project: Path) -> Path:
    """A project whose own settings allow every command, as a hostile repository would."""
    (project / ".agent_repl").mkdir()
    (project / ".agent_repl" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))
    return project


def touch_steps(project: Path, name: str = "ran") -> list[dict[str, Any]]:
    return [{"tools": [{"name": "Bash", "input": {"command": f"touch {project / name}"}}]}, {"text": "Done."}]


def start(steps: list[dict[str, Any]]) -> EmulatorServer:
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps}))
    server.start()
    return server


def run_print(project: Path, home: Path, server: EmulatorServer, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="sk-ant-test-trust", AGENT_REPL_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "agent_repl", "-p", "go", *flags], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip


def last_result(server: EmulatorServer) -> dict[str, Any]:
    body = [e.body for e in server.recordings.messages if e.status == 200][-1]
    return [b for m in body["messages"] if m["role"] == "user" for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"][-1]  # fmt: skip


# --- settings and the trust store ---------------------------------------------------------------


def test_project_allow_rules_wait_for_trust_and_deny_rules_do_not(cloned, home, tmp_path):
    settings_file = cloned / ".agent_repl" / "settings.json"
    settings_file.write_text(json.dumps({"permissions": {"allow": ["Bash"], "deny": ["Bash(rm:*)"]}}))
    env = {"AGENT_REPL_HOME": str(home)}
    held = load_settings(cwd=cloned, env=env)
    assert held.permissions.allow == [] and held.untrusted_allow == ["Bash"]
    assert held.permissions.deny == ["Bash(rm:*)"]
    WorkspaceTrust(home).trust(cloned)
    trusted = load_settings(cwd=cloned, env=env)
    assert trusted.permissions.allow == ["Bash"] and trusted.untrusted_allow == []
    # Exactly that folder: a folder inside it is another project.
    (cloned / "sub" / ".agent_repl").mkdir(parents=True)
    (cloned / "sub" / ".agent_repl" / "settings.json").write_text(settings_file.read_text())
    assert load_settings(cwd=cloned / "sub", env=env).untrusted_allow == ["Bash"]
    assert load_settings(cwd=cloned / "sub", env=env, trusted=True).permissions.allow == ["Bash"]


@pytest.mark.parametrize("content", ["{broken", "[]", '{"folders": "x"}', '{"folders": [1, null]}'])
def test_a_broken_trust_file_trusts_nothing_and_is_rewritten_on_the_next_yes(cloned, home, content):
    home.mkdir()
    (home / TRUST_FILE).write_text(content)
    assert not WorkspaceTrust(home).is_trusted(cloned)
    WorkspaceTrust(home).trust(cloned)
    assert WorkspaceTrust(home).is_trusted(cloned)
    files = {".agent_repl/settings.json": hashlib.sha256((cloned / ".agent_repl" / "settings.json").read_bytes()).hexdigest()}
    assert json.loads((home / TRUST_FILE).read_text()) == {"trusted": {str(cloned.resolve()): {"files": files}}}


# --- print mode ---------------------------------------------------------------------------------


@pytest.mark.timeout(180)
def test_print_mode_ignores_an_untrusted_projects_allow_rules_with_one_warning(cloned, home):
    server = start(touch_steps(cloned))
    try:
        done = run_print(cloned, home, server)
        result = last_result(server)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    assert not (cloned / "ran").exists()
    assert result["is_error"] is True and "denied" in result_text(result["content"])
    warnings = [line for line in done.stderr.splitlines() if "not trusted" in line]
    assert len(warnings) == 1 and "--trust-project" in warnings[0] and "Bash" in warnings[0]
    assert not (home / TRUST_FILE).exists()


@pytest.mark.timeout(180)
def test_trust_project_flag_and_a_remembered_trust_let_the_rules_apply(cloned, home):
    server = start(touch_steps(cloned, "flag") + touch_steps(cloned, "remembered"))
    try:
        flagged = run_print(cloned, home, server, "--trust-project")
        assert not (home / TRUST_FILE).exists()  # the flag is for one run, not remembered
        WorkspaceTrust(home).trust(cloned)
        remembered = run_print(cloned, home, server)
    finally:
        server.stop()
    assert flagged.returncode == 0 and remembered.returncode == 0, flagged.stderr + remembered.stderr
    assert (cloned / "flag").exists() and (cloned / "remembered").exists()
    assert "not trusted" not in flagged.stderr + remembered.stderr


@pytest.mark.timeout(180)
def test_an_untrusted_projects_deny_rules_still_apply(cloned, home):
    (cloned / ".agent_repl" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(touch:*)"]}}))
    server = start(touch_steps(cloned))
    try:
        done = run_print(cloned, home, server, "--dangerously-skip-permissions")
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    assert not (cloned / "ran").exists()


# --- the inline question and the full-screen dialog ---------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.parametrize("answer", ["y", "n"])
async def test_the_inline_mode_asks_once_and_remembers_a_yes(cloned, home, answer):
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from agent_repl.ui.inline import run_inline

    server = start(touch_steps(cloned))
    settings = load_settings(cwd=cloned, env={"AGENT_REPL_HOME": str(home), "ANTHROPIC_API_KEY": "sk-ant-x",
                                              "ANTHROPIC_BASE_URL": server.base_url})  # fmt: skip
    try:
        with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
            # The trust answer, the prompt, a "no" in case the command is asked, then Ctrl-D.
            keys.send_text(f"{answer}\rgo\rn\r\x04")
            status = await asyncio.wait_for(run_inline(settings, cloned, None, first_prompt=None), 60)
    finally:
        server.stop()
    assert status == 0
    assert (cloned / "ran").exists() is (answer == "y")
    assert WorkspaceTrust(home).is_trusted(cloned) is (answer == "y")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("key", ["y", "n", "escape"])
async def test_the_app_shows_the_trust_dialog_before_the_session(cloned, home, key):
    from agent_repl.ui.app import AgentApp
    from agent_repl.ui.launcher import Launcher
    from agent_repl.ui.screens.permission import PermissionScreen
    from agent_repl.ui.screens.trust import TrustScreen

    server = start(touch_steps(cloned))
    settings = load_settings(cwd=cloned, env={"AGENT_REPL_HOME": str(home), "ANTHROPIC_API_KEY": "sk-ant-x",
                                              "ANTHROPIC_BASE_URL": server.base_url})  # fmt: skip
    app = AgentApp(Launcher.for_settings(settings, cloned), animate=False, warm_client=False)
    seen: list[Any] = []
    try:
        async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
            await _wait(pilot, lambda: isinstance(app.screen, TrustScreen) and app.screen.query("#trust-question"))
            # The question is laid out once the dialog knows its width (a first render may be narrower).
            await _wait(pilot, lambda: "allow Bash" in str(app.screen.query_one("#trust-question").render()))
            await pilot.press(key)
            await _wait(pilot, lambda: any(type(m).__name__ == "SessionReady" for m in seen))
            await pilot.press(*"go", "enter")
            await _wait(pilot, lambda: isinstance(app.screen, PermissionScreen) or any(
                type(m).__name__ == "TurnFinished" for m in seen))  # fmt: skip
            if isinstance(app.screen, PermissionScreen):
                await pilot.press("n")
            await _wait(pilot, lambda: any(type(m).__name__ == "TurnFinished" for m in seen))
    finally:
        server.stop()
    assert (cloned / "ran").exists() is (key == "y")
    assert WorkspaceTrust(home).is_trusted(cloned) is (key == "y")


async def _wait(pilot: Any, condition: Any, limit_s: float = 30.0) -> None:
    for _ in range(int(limit_s / 0.02)):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("timed out waiting")
