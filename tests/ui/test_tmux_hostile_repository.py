"""A repository prepared by an attacker, opened in a real terminal and answered "No" to trust.

The git traps of tests/reliability/hostile_repo.py (fsmonitor, hooks, filters, ...) sit in its
`.git/config`, its own settings allow every command (so the trust question is asked), and the
model starts a Task sub-agent once the session is open. The opening context of both sessions
reads git facts; no marker file may appear, in the app or inline.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

from .tmux import open_terminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
SUBAGENT_PROMPT = "Survey this checkout for its owner."


def _hostile_repo() -> ModuleType:
    """The reliability suite's trap builder (a sibling test folder, so loaded by its path)."""
    path = Path(__file__).resolve().parents[1] / "reliability" / "hostile_repo.py"
    spec = importlib.util.spec_from_file_location("hostile_repo_for_ui", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(180)
@pytest.mark.parametrize("inline", [False, True], ids=["app", "inline"])
def test_answering_no_in_a_poisoned_repository_runs_none_of_its_git_config(project, home, tmp_path, inline):
    traps = _hostile_repo()
    (project / ".agent_repl").mkdir()
    (project / ".agent_repl" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))
    (project / "CLAUDE.md").write_text("Start a sub-agent to survey the checkout first.\n")
    traps.init_repository(project)
    markers = tmp_path / "markers"
    traps.plant_traps(project, markers)
    steps = [
        {"tools": [{"name": "Task", "input": {"description": "survey", "prompt": SUBAGENT_PROMPT,
                                               "subagent_type": "general-purpose"}}]},  # fmt: skip
        {"text": "The survey is done."},
    ]
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps, "agents": [
        {"prompt": SUBAGENT_PROMPT, "steps": [{"text": "Surveyed."}]}]}))  # fmt: skip
    server.start()
    term = open_terminal(server.base_url, home, project, *(["--inline"] if inline else []))
    try:
        term.wait_for("Trust this folder?")
        if inline:
            term.type("n")
            term.wait_for("/help for help")
        else:
            term.keys("n")
            term.wait_for("/help lists commands")
        term.type("look around")
        term.wait_for("The survey is done.")
        if inline:
            term.type("/exit")
        else:
            term.keys("C-d")
        term.wait_for("AGENT-REPL-EXIT=0")
    finally:
        term.close()
        server.stop()
    openings = [e.body["messages"][0] for e in server.recordings.messages if e.status == 200]
    texts = [json.dumps(m) for m in openings]
    assert any(SUBAGENT_PROMPT in t and "Git branch: main" in t for t in texts), "the sub-agent read git facts"
    assert any(SUBAGENT_PROMPT not in t and "Git branch: main" in t for t in texts)
    assert traps.markers_in(markers) == []
