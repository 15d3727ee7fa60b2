"""The git facts of a session's opening context run nothing the repository configures.

`git_summary` (the main session's and every sub-agent's opening context) against a repository
whose config names a command for every way git runs one by itself, against an environment and
a home that try to re-enable them, and against a config that never finishes reading. Every git
call the agent makes on its own behalf goes through `agent_repl.core.permissions.safe_git`.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from agent_repl.core.api.system_prompt import git_summary, session_context
from agent_repl.core.permissions.safe_git import git_environment, run_git

from .hostile_repo import git, init_repository, markers_in, plant_lazy_fetch, plant_traps

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def repo(project: Path) -> Path:
    init_repository(project)
    return project


def test_a_poisoned_repository_gives_its_facts_and_runs_nothing(repo, tmp_path):
    markers = tmp_path / "markers"
    plant_traps(repo, markers)
    (repo / "src" / "app.py").write_text("print('changed')\n")  # behind the `evil` filter
    (repo / "new.txt").write_text("untracked\n")
    index = (repo / ".git" / "index").stat().st_mtime_ns
    summary = git_summary(repo)
    assert summary == "Git branch: main\nGit status:\n M src/app.py\n?? new.txt"
    assert markers_in(markers) == []
    assert (repo / ".git" / "index").stat().st_mtime_ns == index, "status rewrote the index"
    assert "Git branch: main" in session_context(repo)
    assert markers_in(markers) == []


def test_the_environment_and_the_home_cannot_turn_a_trap_back_on(repo, tmp_path, monkeypatch):
    markers = tmp_path / "markers"
    markers.mkdir()
    trap = tmp_path / "trap.sh"
    trap.write_text(f"#!/bin/sh\ntouch '{markers}/from-environment'\n")
    trap.chmod(0o755)
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    for config in (home / ".gitconfig", home / ".config" / "git" / "config"):
        config.write_text(f"[core]\n\tfsmonitor = {trap}\n\tpager = {trap}\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "file").write_text("x\n")
    init_repository(other)
    git(other, "checkout", "-q", "-b", "elsewhere")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='{trap}'")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(trap))
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    for name in ("GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_ASKPASS"):
        monkeypatch.setenv(name, str(trap))
    monkeypatch.delenv("GIT_CONFIG_NOSYSTEM", raising=False)
    (repo / "README.md").write_text("# changed\n")
    assert git_summary(repo) == "Git branch: main\nGit status:\n M README.md"
    assert markers_in(markers) == []
    env = git_environment()
    assert env["GIT_CONFIG_GLOBAL"] == os.devnull and env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert not {"GIT_DIR", "GIT_CONFIG_PARAMETERS", "GIT_SSH_COMMAND", "XDG_CONFIG_HOME"} & set(env)


def test_a_missing_object_is_never_fetched(repo, tmp_path):
    markers = tmp_path / "markers"
    plant_traps(repo, markers)
    plant_lazy_fetch(repo, markers)
    assert git_summary(repo) == "Git branch: main\nGit status: (unavailable)"
    assert markers_in(markers) == []


def test_outside_a_repository_and_on_a_config_that_never_ends(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert git_summary(plain) == "Not a git repository."
    (plain / "file").write_text("x\n")
    init_repository(plain)
    os.mkfifo(plain / ".git" / "endless")
    git(plain, "config", "include.path", "endless")  # reading it blocks until someone writes
    assert run_git(plain, "rev-parse", "HEAD", timeout=1) is None


_STARTS_PROCESS = frozenset(
    {"run", "Popen", "call", "check_call", "check_output", "create_subprocess_exec", "create_subprocess_shell",
     "system", "popen", "execv", "execvp", "execvpe", "spawnv", "spawnvp"}
)  # fmt: skip


def _is_git_command(node: ast.expr) -> bool:
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        first = node.elts[0]
        return isinstance(first, ast.Constant) and first.value == "git"
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(" ", 1)[0] == "git"


def _git_invocations(source: str) -> list[int]:
    """Lines of `source` that start a process whose command line is git's."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        commands = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "args")]
        if name in _STARTS_PROCESS and any(_is_git_command(c) for c in commands):
            lines.append(node.lineno)
    return lines


OLD_CALLS = """
done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5)
done = subprocess.run(
    ["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=cwd, capture_output=True,
)
proc = await asyncio.create_subprocess_shell("git status --short")
"""


def test_every_git_call_of_the_agent_goes_through_the_safe_runner():
    assert _git_invocations(OLD_CALLS) == [2, 3, 6], "the scan finds the ways git used to be run"
    found = {
        str(path.relative_to(ROOT)): lines
        for folder in ("agent_repl", "tools")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.name != "safe_git.py" and (lines := _git_invocations(path.read_text(encoding="utf-8")))
    }
    assert found == {}
