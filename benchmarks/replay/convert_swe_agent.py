"""SWE-agent `.traj` -> `Trajectory`.

The file's `trajectory[]` holds one entry per model step: `thought` (the reply's text), `action`
(a command of SWE-agent's shell interface: `open`, `edit`, `find_file`, or plain shell) and
`observation` (what came back). Every action is a shell action for us, so it becomes a call of our
`Bash` tool with the action as the command and the observation as its recorded output. The task
is the first user message of `history`; a demonstration SWE-agent shows the model first is sent
as well, marked as injected rather than typed. An entry's `execution_time` is its tool's time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.replay.trajectory import Step, ToolCall, Trajectory, UserText, make_turn


def _opening_user_messages(history: list[dict[str, Any]]) -> list[UserText]:
    opening: list[UserText] = []
    for message in history:
        if message.get("role") == "assistant":
            break
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
        is_demo = str(message.get("is_demo", "")).lower() == "true"
        opening.append(UserText(text=str(content or ""), is_meta=is_demo))
    return opening


def convert_swe_agent(data: dict[str, Any], *, name: str, source: str) -> Trajectory:
    history = [m for m in data.get("history", []) if isinstance(m, dict)]
    user = _opening_user_messages(history) or [UserText(text="Solve the issue in this repository.")]
    steps = []
    for entry in data.get("trajectory", []):
        action = str(entry.get("action") or "").rstrip("\n")
        thought = str(entry.get("thought") or "").strip() or None
        observation = str(entry.get("observation") or "").rstrip("\n") or "(no output)"
        tools = [ToolCall(name="Bash", input={"command": action}, output=observation)] if action else []
        seconds = entry.get("execution_time")
        timed = isinstance(seconds, int | float) and not isinstance(seconds, bool) and bool(tools)
        steps.append(Step(text=thought, tools=tools, tool_seconds=float(seconds) if timed else None))
    return Trajectory(name=name, source=source, turns=[make_turn(user, steps)])


def load_swe_agent(path: Path, *, name: str, source: str) -> Trajectory:
    return convert_swe_agent(json.loads(path.read_text(encoding="utf-8")), name=name, source=source)
