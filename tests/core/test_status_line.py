"""The user's status line command (`statusLine`): what it is given, what of its output is shown,
and that a project's command waits for trust like its hooks."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_repl.core.config.settings import load_settings
from agent_repl.core.config.trust import grant_files
from agent_repl.core.hooks.status_line import run_status_command, status_input
from agent_repl.core.tooling.redaction import SecretRedactor
from agent_repl.ui.widgets.user_status_line import status_text

PAYLOAD = status_input(
    session_id="s-1",
    transcript_path="/t.jsonl",
    cwd="/p",
    model="claude-opus-4-8",
    version="0.1.0",
    permission_mode="default",
    cost_usd=0.25,
    duration_ms=1000,
    api_duration_ms=400,
    context_tokens=50_000,
    context_window=200_000,
    usage={"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 49_985},
)


async def _run(tmp_path: Path, script: str, **kwargs):
    (tmp_path / "status.py").write_text(script)
    return await run_status_command(
        f"python3 {tmp_path / 'status.py'}",
        json.dumps(PAYLOAD).encode(),
        cwd=tmp_path,
        redactor=kwargs.pop("redactor", SecretRedactor()),
        **kwargs,
    )


async def test_the_command_reads_the_session_on_stdin_and_its_first_lines_are_the_status(tmp_path):
    run = await _run(
        tmp_path,
        "import json, sys\n"
        "d = json.load(sys.stdin)\n"
        "print(f\"[{d['model']['display_name']}] {d['context_window']['used_percentage']}% ${d['cost']['total_cost_usd']}\")\n"
        "print('second'); print(); print('third'); print('fourth')\n",
    )
    assert run.lines == ["[claude-opus-4-8] 25% $0.25", "second", "third"] and run.problem == ""


async def test_a_failing_silent_or_slow_command_blanks_the_line_and_says_why(tmp_path):
    assert (await _run(tmp_path, "import sys; print('x'); sys.exit(3)")).problem == "exited with 3"
    assert (await _run(tmp_path, "pass")).problem == "printed nothing"
    slow = await _run(tmp_path, "import time; time.sleep(30)", limit_s=0.5)
    assert slow.lines == [] and slow.problem == "timed out after 0.5 s"


async def test_the_command_gets_no_credentials_and_its_output_is_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-status-line-secret-0123456789")
    redactor = SecretRedactor(["sk-ant-status-line-secret-0123456789"])
    run = await _run(
        tmp_path,
        "import os; print(os.environ.get('ANTHROPIC_API_KEY', 'none')); print('sk-ant-status-line-secret-0123456789')",
        redactor=redactor,
    )
    assert run.lines[0] == "none" and "status-line-secret" not in run.lines[1]


def test_colours_are_kept_and_every_other_escape_is_shown_not_acted_on():
    text = status_text("\x1b[31mred\x1b[0m \x1b]0;retitled\x07 \x1b[2J\rover", padding=2)
    assert text.plain.startswith("  red ")
    assert "\x1b" not in text.plain and "\x07" not in text.plain and "\r" not in text.plain
    assert "␛]0;retitled␇" in text.plain and "␛[2J␍over" in text.plain
    red = [span for span in text.spans if span.style.color is not None and span.style.color.number == 1]
    assert [text.plain[span.start : span.end] for span in red] == ["red"]


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_claude_codes_statusline_key_is_read_and_a_projects_waits_for_trust(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    env = {"AGENT_REPL_HOME": str(home)}
    _write(home / "settings.json", {"statusLine": {"type": "command", "command": "echo mine", "padding": 1}})
    settings = load_settings(cwd=project, env=env, trusted=False)
    assert settings.status_line is not None and settings.status_line.command == "echo mine"

    _write(project / ".agent_repl" / "settings.json", {"statusLine": {"type": "command", "command": "sh scripts/s.sh"}})
    untrusted = load_settings(cwd=project, env=env, trusted=False)
    assert untrusted.status_line.command == "echo mine" and "status_line" in untrusted.held_back
    assert load_settings(cwd=project, env=env, trusted=True).status_line.command == "sh scripts/s.sh"


def test_the_script_a_projects_status_line_runs_is_part_of_what_trust_covers(tmp_path):
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    (project / "scripts" / "s.sh").write_text("echo hi\n")
    _write(project / ".agent_repl" / "settings.json", {"statusLine": {"type": "command", "command": "sh scripts/s.sh"}})
    assert os.path.join("scripts", "s.sh") in grant_files(project)
