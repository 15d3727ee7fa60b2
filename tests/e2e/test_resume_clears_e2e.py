"""Resuming an old Claude Code session through the CLI: the results its microcompact cleared stay
cleared, and `clear_on_resume` decides whether the months since its last reply clear the rest."""

from __future__ import annotations

import json
from pathlib import Path

from agent_repl.context.state import CLEARED_TOOL_RESULT
from agent_repl.emulator.policies.base import strip_id_tag

from .conftest import agent_env, run_agent

FIXTURE = Path(__file__).resolve().parents[1] / "transcript" / "fixtures" / "cc_2.1.22_microcompact.jsonl"


def _compacted() -> list[str]:
    for line in FIXTURE.read_text().splitlines():
        record = json.loads(line)
        if record.get("subtype") == "microcompact_boundary":
            return record["microcompactMetadata"]["compactedToolIds"]
    raise AssertionError("no microcompact_boundary in the fixture")


def _results(body: dict) -> dict[str, str]:
    out = {}
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block["type"] == "tool_result":
                content = block["content"]
                text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
                out[block["tool_use_id"]] = strip_id_tag(text)
    return out


def _resume(emulator, project: Path, home: Path, settings: dict) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps(settings))
    emulated = emulator([{"text": "ok"}])
    done = run_agent(["--resume", str(FIXTURE), "-p", "go on", "--output-format", "json"], cwd=project,
                     env=agent_env(emulated, home))
    assert done.returncode == 0, done.stderr
    return _results(emulated.bodies()[-1])


def test_with_clear_on_resume_off_only_what_claude_code_cleared_is_cleared(emulator, project, home):
    results = _resume(emulator, project, home, {"clear_on_resume": False})
    cleared = sorted(tid for tid, text in results.items() if text.startswith(CLEARED_TOOL_RESULT))
    assert len(results) == 11
    assert cleared == sorted(_compacted())


def test_by_default_the_old_session_is_cleared_as_after_any_long_pause(emulator, project, tmp_path):
    results = _resume(emulator, project, tmp_path / "home2", {})
    cleared = {tid for tid, text in results.items() if text.startswith(CLEARED_TOOL_RESULT)}
    # Every clearable result but the five newest, and those Claude Code had cleared.
    assert set(_compacted()) <= cleared and len(results) - len(cleared) == 5
