"""Edits in a real terminal (tmux): the permission modes, the todo list, the diff dialog, /rewind,
and the offline demo model showing a diff and taking it back."""

from __future__ import annotations

from pathlib import Path

from .test_tmux_e2e import pytestmark  # noqa: F401
from .tmux import input_box, open_terminal, unwrapped


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
    term = open_terminal(server.base_url, home, project)
    try:
        term.wait_for("/help lists commands")
        term.keys("BTab")
        term.wait_for("⏵⏵ accept edits on (shift+tab to cycle)")
        term.keys("BTab")
        term.wait_for("⏸ plan mode on (shift+tab to cycle)")
        term.keys("BTab")
        term.wait_until_gone("plan mode on")
        assert "accept edits on" not in term.screen()

        term.type("fix the greeting")
        screen = term.wait_for("Make this edit to src/app.py?")
        assert "◐ Fixing the greeting" in screen and "☒ Read app.py" in screen, screen
        assert "- print('hi')" in screen and "+ print('hello')" in screen, screen
        assert "don't ask again for edits this session" in screen
        term.keys("a")
        term.wait_for("Greeting fixed.")
        term.wait_for("⏵⏵ accept edits on")
        assert (project / "src" / "app.py").read_text() == "print('hello')  # greeted\n"

        term.keys("Escape")
        term.wait_for("press Esc again to rewind")
        term.keys("Escape")
        term.wait_for("Rewind to just before a prompt")
        term.keys("Enter")
        screen = term.wait_for("Restore code and conversation")
        assert "1 file changed: src/app.py" in unwrapped(screen)
        term.keys("Enter")
        term.wait_for("Restored src/app.py")
        assert (project / "src" / "app.py").read_text() == "print('hi')\n"
        # The rewound prompt is back in the input box, ready to edit and send again.
        term.wait_until(lambda s: input_box(s) == "fix the greeting", "the prompt back in the input")

        term.keys("C-d")
        term.wait_for("AGENT-REPL-EXIT=0")
    finally:
        term.close()


def test_the_offline_demo_shows_a_diff_and_takes_it_back(project: Path, home: Path):
    term = open_terminal(None, home, project)  # no API settings: the offline demo
    try:
        term.wait_for("offline demo model")
        term.type("edit README.md: replace `Demo project` with `Sample project`")
        screen = term.wait_for("Make this edit to README.md?")
        assert "- # Demo project" in screen and "+ # Sample project" in screen, screen
        term.keys("y")
        term.wait_for("/rewind (or Esc twice")
        assert (project / "README.md").read_text().startswith("# Sample project\n")
        term.type("/rewind")
        term.wait_for("Rewind to just before a prompt")
        term.keys("Enter")
        term.wait_for("Restore code and conversation")
        term.keys("Down", "Down", "Enter")  # restore code only
        term.wait_for("Restored README.md")
        assert (project / "README.md").read_text().startswith("# Demo project\n")
        term.keys("C-d")
        term.wait_for("AGENT-REPL-EXIT=0")
        assert term.transcripts(), "the session was written under the test's own home"
    finally:
        term.close()
