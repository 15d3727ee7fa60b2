"""The exit hint's command works from the user's shell, also after `make run` (venv not on PATH)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from agent_repl.ui.session_info import agent_repl_command

VENV_SCRIPT = Path(sys.executable).parent / "agent-repl"


def test_venv_script_not_on_path_is_named_by_full_path(tmp_path: Path) -> None:
    command = agent_repl_command(argv0=str(VENV_SCRIPT), path_env=str(tmp_path))
    assert command != "agent-repl"
    words = shlex.split(command)
    assert Path(words[0]).is_absolute()
    result = subprocess.run(
        [*words, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": str(tmp_path)},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "--resume" in result.stdout


def test_relative_venv_script_is_made_absolute(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(VENV_SCRIPT.parent.parent.parent)
    relative = VENV_SCRIPT.relative_to(Path.cwd())
    command = agent_repl_command(argv0=str(relative), path_env=str(tmp_path))
    assert Path(shlex.split(command)[0]) == VENV_SCRIPT.absolute()


def test_script_found_on_path_keeps_the_short_name() -> None:
    command = agent_repl_command(argv0=str(VENV_SCRIPT), path_env=str(VENV_SCRIPT.parent))
    assert command == "agent-repl"


def test_module_run_without_script_on_path_names_the_interpreter(tmp_path: Path) -> None:
    command = agent_repl_command(argv0="/somewhere/agent_repl/__main__.py", path_env=str(tmp_path))
    words = shlex.split(command)
    assert words[0] == sys.executable and words[1:] == ["-m", "agent_repl"]


def test_exit_hint_after_make_run_works_when_pasted(tmp_path: Path, monkeypatch) -> None:
    from types import SimpleNamespace

    from agent_repl.ui.session_info import resume_hint
    from tests.ui.conftest import fixed_session
    from tests.ui.helpers import user

    transcript = tmp_path / "t.jsonl"
    transcript.write_text("{}\n")
    session = fixed_session([user("u1", "hello")], cwd=tmp_path, home=tmp_path / "home")
    session.sink = SimpleNamespace(path=transcript)  # type: ignore[assignment]
    monkeypatch.setattr(sys, "argv", [str(VENV_SCRIPT)])
    monkeypatch.setenv("PATH", str(tmp_path))
    hint = resume_hint(session)
    assert hint is not None
    command = hint.split("Resume this session with: ", 1)[1]
    words = shlex.split(command)
    assert words[-2:] == ["--resume", session.session_id]
    result = subprocess.run(
        [*words[:-2], "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": str(tmp_path)},
        check=False,
    )
    assert result.returncode == 0, result.stderr
