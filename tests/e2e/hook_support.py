"""Hook scripts for the hook tests: small Python programs that log the JSON they get on stdin
and answer as the test tells them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# The common input fields and each event's own, as Claude Code's hooks reference documents them.
COMMON_FIELDS = {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name"}
EVENT_FIELDS = {
    "PreToolUse": {"tool_name", "tool_input", "tool_use_id"},
    "PostToolUse": {"tool_name", "tool_input", "tool_response", "tool_use_id"},
    "UserPromptSubmit": {"prompt"},
    "Stop": {"stop_hook_active"},
    "SubagentStop": {"stop_hook_active", "agent_id", "agent_transcript_path"},
    "PreCompact": {"trigger", "custom_instructions"},
    "SessionStart": {"source", "model"},
    "SessionEnd": {"reason"},
    "Notification": {"message", "notification_type"},
}

PRELUDE = """
import json, sys, pathlib
data = json.load(sys.stdin)
with open({log!r}, "a") as log:
    log.write(json.dumps(data) + "\\n")
"""


def hook_script(directory: Path, name: str, body: str) -> str:
    """A command running `body` (Python, with the event's input in `data`); it logs every input."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / f"{name}.py"
    script.write_text(PRELUDE.format(log=str(directory / "inputs.jsonl")) + body)
    return f"{sys.executable} {script}"


def logged_inputs(directory: Path) -> list[dict[str, Any]]:
    path = directory / "inputs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def assert_documented_input(data: dict[str, Any]) -> None:
    """A hook's stdin has exactly Claude Code's documented fields for its event."""
    event = data["hook_event_name"]
    assert set(data) == COMMON_FIELDS | EVENT_FIELDS[event], (event, sorted(data))


def hooks_setting(event: str, command: str, matcher: str = "") -> dict[str, Any]:
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": 30}]}
    if matcher:
        entry["matcher"] = matcher
    return {event: [entry]}
