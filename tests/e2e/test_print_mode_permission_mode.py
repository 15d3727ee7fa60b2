"""`--permission-mode` in print mode: the CLI in a subprocess, the emulator over HTTP as the model."""

from __future__ import annotations

import json

from .conftest import agent_env, run_agent


def _steps(path: str) -> list[dict]:
    return [
        {"tools": [{"name": "Read", "input": {"file_path": path}}]},
        {"tools": [{"name": "Edit", "input": {"file_path": path, "old_string": "'hi'", "new_string": "'hello'"}}]},
        {"text": "Done."},
    ]


def test_print_mode_denies_edits_by_default_and_accept_edits_lets_them_run(emulator, project, home):
    app_py = project / "src" / "app.py"
    before = app_py.read_text()
    emulated = emulator(_steps(str(app_py)) + _steps(str(app_py)))
    env = agent_env(emulated, home)

    denied = run_agent(["-p", "say hello", "--output-format", "stream-json", "--verbose"], cwd=project, env=env)
    assert denied.returncode == 0, denied.stderr
    lines = [json.loads(line) for line in denied.stdout.splitlines()]
    assert lines[0]["type"] == "system" and lines[0]["permissionMode"] == "default"
    # Claude Code's line schema: the refused call is a user line's error result and a permission denial.
    results = [b for e in lines if e["type"] == "user" for b in e["message"]["content"] if b["type"] == "tool_result"]
    [edit] = [b for b in results if b.get("is_error")]
    assert "denied" in json.dumps(edit["content"]).lower()
    assert [d["tool_name"] for d in lines[-1]["permission_denials"]] == ["Edit"]
    assert app_py.read_text() == before

    accepted = run_agent(
        ["-p", "say hello", "--permission-mode", "acceptEdits", "--output-format", "json"], cwd=project, env=env
    )
    assert accepted.returncode == 0, accepted.stderr
    assert json.loads(accepted.stdout)["result"] == "Done."
    assert app_py.read_text() == before.replace("'hi'", "'hello'")

    wrong = run_agent(["-p", "x", "--permission-mode", "yolo"], cwd=project, env=env)
    assert wrong.returncode == 2 and "unknown permission mode 'yolo'" in wrong.stderr
