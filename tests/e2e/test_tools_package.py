"""The built-in tools are `agent_repl.tools`: a project with its own `tools` package runs the agent
fine, and the wheel installs one top-level package, `agent_repl`."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

from .conftest import agent_env, run_agent

ROOT = Path(__file__).resolve().parents[2]


def own_tools_package(project: Path) -> None:
    """A project whose `tools` package would shadow a top-level `tools` (cwd comes first on sys.path)."""
    (project / "tools").mkdir()
    (project / "tools" / "__init__.py").write_text('"""The project\'s own tools."""\n')
    (project / "tools" / "task.py").write_text('raise RuntimeError("the agent imported the project\'s tools.task")\n')


def test_print_mode_runs_in_a_project_that_has_its_own_tools_package(emulator, project, home):
    own_tools_package(project)
    emulated = emulator([
        {"tools": [{"name": "Read", "input": {"file_path": str(project / "tools" / "__init__.py")}}]},
        {"text": "Read it."},
    ])
    done = run_agent(["-p", "read the tools package", "--output-format", "json"], cwd=project, env=agent_env(emulated, home))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "Read it."
    sent = emulated.bodies()[1]["messages"][-1]["content"][0]
    assert sent["type"] == "tool_result" and "The project's own tools." in json.dumps(sent)


def test_the_console_script_runs_in_a_project_that_has_its_own_tools_package(emulator, project, home):
    own_tools_package(project)
    emulated = emulator([{"text": "Hello from the console script."}])
    agent = Path(sys.executable).with_name("agent-repl")
    done = subprocess.run(
        [str(agent), "-p", "hello", "--output-format", "json"],
        cwd=project, env=agent_env(emulated, home), capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "Hello from the console script."


def setuptools_major() -> int:
    try:
        return int(version("setuptools").split(".")[0])
    except PackageNotFoundError:
        return 0


def test_the_wheel_installs_one_top_level_package_agent_repl(tmp_path):
    if setuptools_major() < 77:
        pytest.skip("building offline needs setuptools>=77 here (the dev extra); pip would fetch it from the network")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w",
         str(tmp_path), str(ROOT)],
        capture_output=True, text=True, timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("agent_repl-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (top_level,) = [name for name in names if name.endswith(".dist-info/top_level.txt")]
        assert archive.read(top_level).decode().split() == ["agent_repl"]
    assert "agent_repl/tools/task.py" in names and "agent_repl/tools/bash.py" in names
    assert not [name for name in names if name.startswith("tools/")]
