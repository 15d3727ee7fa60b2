"""Edits in a real terminal (tmux): the permission modes, the todo list, the diff dialog, /rewind,
and the offline demo model showing a diff and taking it back."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

from .test_tmux_e2e import _screen, _start, _type, _unwrapped, _wait_for_text, pytestmark  # noqa: F401


def _keys(name: str, *keys: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", name, *keys], check=True, timeout=10)


def _wait_until_gone(name: str, text: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _screen(name)
        if _unwrapped(text) not in _unwrapped(screen):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} stayed; the screen was:\n{screen}")


def test_modes_todos_the_diff_dialog_and_rewind_in_a_terminal(emulator, project: Path, home: Path):
    app_py = str(project / "src" / "app.py")
    todos = [
        {"content": "Read app.py", "status": "completed", "activeForm": "Reading app.py"},
        {"content": "Fix the greeting", "status": "in_progress", "activeForm": "Fixing the greeting"},
    ]
    server = emulator(
        [
            {"text": "Planning.", "tools": [{"name": "TodoWrite", "input": {"todos": todos}}]},
            {"tools": [{"name": "Read", "input": {"file_path": app_py}}]},
            {"tools": [{"name": "Edit", "input": {"file_path": app_py, "old_string": "'hi'", "new_string": "'hello'"}}]},
            {"tools": [{"name": "Edit", "input": {"file_path": app_py, "old_string": "print('hello')", "new_string": "print('hello')  # greeted"}}]},
            {"text": "Greeting fixed."},
        ]
    )
    name = _start(server, home, project)
    try:
        _wait_for_text(name, "/help lists commands")
        _keys(name, "BTab")
        _wait_for_text(name, "⏵⏵ accept edits on (shift+tab to cycle)")
        _keys(name, "BTab")
        _wait_for_text(name, "⏸ plan mode on (shift+tab to cycle)")
        _keys(name, "BTab")
        _wait_until_gone(name, "plan mode on")
        assert "accept edits on" not in _screen(name)

        _type(name, "fix the greeting")
        screen = _wait_for_text(name, "Make this edit to src/app.py?")
        assert "◐ Fixing the greeting" in screen and "☒ Read app.py" in screen, screen
        assert "- print('hi')" in screen and "+ print('hello')" in screen, screen
        assert "don't ask again for edits this session" in screen
        _keys(name, "a")
        _wait_for_text(name, "Greeting fixed.")
        _wait_for_text(name, "⏵⏵ accept edits on")
        assert (project / "src" / "app.py").read_text() == "print('hello')  # greeted\n"

        _keys(name, "Escape")
        _wait_for_text(name, "press Esc again to rewind")
        _keys(name, "Escape")
        _wait_for_text(name, "Rewind to just before a prompt")
        _keys(name, "Enter")
        screen = _wait_for_text(name, "Restore code and conversation")
        assert "1 file changed: src/app.py" in _unwrapped(screen)
        _keys(name, "Enter")
        _wait_for_text(name, "Restored src/app.py")
        assert (project / "src" / "app.py").read_text() == "print('hi')\n"
        _wait_for_text(name, "› fix the greeting")  # the prompt is back in the input... and in history

        _keys(name, "C-d")
        _wait_for_text(name, "AGENT-REPL-EXIT=0")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, timeout=10)


def test_the_offline_demo_shows_a_diff_and_takes_it_back(project: Path, home: Path):
    name = f"agent-repl-demo-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(AGENT_REPL_HOME=str(home), TERM="xterm-256color")
    command = f"{shlex.quote(sys.executable)} -m agent_repl; echo AGENT-REPL-EXIT=$?; sleep 30"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", "-c", str(project), command],
        check=True, timeout=10, env=env,
    )
    subprocess.run(["tmux", "resize-window", "-t", name, "-x", "120", "-y", "40"], capture_output=True, timeout=10)
    try:
        _wait_for_text(name, "offline demo model")
        _type(name, "edit README.md: replace `Demo project` with `Sample project`")
        screen = _wait_for_text(name, "Make this edit to README.md?")
        assert "- # Demo project" in screen and "+ # Sample project" in screen, screen
        _keys(name, "y")
        _wait_for_text(name, "/rewind (or Esc twice")
        assert (project / "README.md").read_text().startswith("# Sample project\n")
        _type(name, "/rewind")
        _wait_for_text(name, "Rewind to just before a prompt")
        _keys(name, "Enter")
        _wait_for_text(name, "Restore code and conversation")
        _keys(name, "Down", "Down", "Enter")  # restore code only
        _wait_for_text(name, "Restored README.md")
        assert (project / "README.md").read_text().startswith("# Demo project\n")
        _keys(name, "C-d")
        _wait_for_text(name, "AGENT-REPL-EXIT=0")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, timeout=10)
