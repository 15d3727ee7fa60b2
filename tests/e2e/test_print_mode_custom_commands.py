"""The public fixture's command and skill in print mode (`-p "/review ..."`): the command's text is
the prompt, the skill is offered and loads; untrusted, the same line reaches the model as typed;
a shell line the rules refuse sends nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .conftest import agent_env, run_agent

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code_project"


def _user_text(body: dict) -> str:
    return json.dumps([m for m in body["messages"] if m["role"] == "user"], ensure_ascii=False)


def test_a_fixture_command_runs_and_its_skill_loads_in_print_mode(emulator, project, home, tmp_path):
    shutil.copytree(FIXTURE / ".claude", project / ".claude")
    emulated = emulator([
        {"tools": [{"name": "Skill", "input": {"skill": "local-smoke-test"}}]},
        {"text": "REVIEWED with the smoke checklist."},
    ])  # fmt: skip
    env = agent_env(emulated, home, CLAUDE_CONFIG_DIR=str(tmp_path / "no-user-claude"))
    done = run_agent(["-p", "/review src/app.py", "--trust-project", "--output-format", "json"], cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "REVIEWED with the smoke checklist." and result["num_turns"] == 2

    first, second = emulated.bodies()
    assert "Review the current changes or this scope:\\n\\nsrc/app.py\\n\\nFocus on correctness" in _user_text(first)
    [skill_tool] = [t for t in first["tools"] if t["name"] == "Skill"]
    assert "- local-smoke-test: Local verification checklist for 1Code desktop startup" in skill_tool["description"]
    assert "Keep these tracks separate:" in _user_text(second)


def test_untrusted_the_command_line_goes_to_the_model_as_typed(emulator, project, home, tmp_path):
    shutil.copytree(FIXTURE / ".claude", project / ".claude")
    emulated = emulator([{"text": "plain"}])
    env = agent_env(emulated, home, CLAUDE_CONFIG_DIR=str(tmp_path / "no-user-claude"))
    done = run_agent(["-p", "/review src/app.py"], cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    [body] = emulated.bodies()
    assert "Review the current changes" not in _user_text(body) and "/review src/app.py" in _user_text(body)
    assert "Skill" not in [t["name"] for t in body["tools"]]


def test_a_refused_shell_line_sends_nothing(emulator, project, home, tmp_path):
    commands = project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "leak.md").write_text("The host: !`cat /etc/hostname`\n")
    emulated = emulator([{"text": "unused"}])
    env = agent_env(emulated, home, CLAUDE_CONFIG_DIR=str(tmp_path / "no-user-claude"))
    done = run_agent(["-p", "/leak", "--trust-project"], cwd=project, env=env)
    assert done.returncode != 0
    assert "/leak: `cat /etc/hostname` was not allowed" in done.stdout + done.stderr
    assert "nothing was sent" in done.stdout + done.stderr
    assert emulated.bodies() == []
