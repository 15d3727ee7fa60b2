"""The workspace-trust question in a real terminal (tmux), in the full-screen app and inline mode."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_repl.core.trust import WorkspaceTrust

from .test_tmux_e2e import _start, _type, _wait_for_text
from .tmux import unwrapped

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _key(name: str, key: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", name, key], check=True, timeout=10)


@pytest.mark.parametrize("inline", [False, True], ids=["app", "inline"])
def test_a_cloned_projects_rules_wait_for_the_trust_answer(emulator, project: Path, home: Path, inline: bool):
    (project / ".agent_repl").mkdir()
    (project / ".agent_repl" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))
    server = emulator([{"tools": [{"name": "Bash", "input": {"command": "touch ran-after-trust"}}]},
                       {"text": "Touched it."}])  # fmt: skip
    name = _start(server, home, project, *(["--inline"] if inline else []))
    try:
        screen = _wait_for_text(name, "Trust this folder?")
        assert "allow Bash (.agent_repl/settings.json)" in unwrapped(screen)
        if inline:
            _type(name, "y")
            _wait_for_text(name, "/help for help")
        else:
            _key(name, "y")
            _wait_for_text(name, "/help lists commands")
        _type(name, "touch the file")
        _wait_for_text(name, "Touched it.")
        if inline:
            _type(name, "/exit")
        else:
            _key(name, "C-d")
        _wait_for_text(name, "AGENT-REPL-EXIT=0")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, timeout=10)
    assert (project / "ran-after-trust").exists()  # the trusted rule ran it without a question
    assert WorkspaceTrust(home).is_trusted(project)


def test_a_cloned_projects_mcp_server_starts_only_once_the_folder_is_trusted(emulator, project: Path, home: Path):
    server_script = Path(__file__).resolve().parents[1] / "mcp" / "mcp_test_server.py"
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": {"command": sys.executable, "args": [str(server_script)]}}}))
    name = _start(emulator([{"text": "ok"}]), home, project)
    try:
        screen = _wait_for_text(name, "Trust this folder?")
        assert "MCP server 'repo' (.mcp.json)" in unwrapped(screen)
        assert "settings.json" not in screen  # the question names only what this folder configures
        _key(name, "y")
        _wait_for_text(name, "MCP: 1 server (1 connected), 8 tools")
        _key(name, "C-d")
        _wait_for_text(name, "AGENT-REPL-EXIT=0")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, timeout=10)
    assert WorkspaceTrust(home).is_trusted(project)
