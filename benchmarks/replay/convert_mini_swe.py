"""mini-swe-agent `.traj.json` -> `Trajectory`.

Two shapes exist: the tool-calling format (assistant `tool_calls` with a `bash` function, outputs
as `tool` messages carrying `extra.raw_output` and `extra.returncode`) and the older text format
(the command in a ```bash block of the assistant's text, the output in the next `user` message).
Shell actions become calls of our `Bash` tool; the output is the raw text the shell produced
(mini-swe-agent cut long outputs for its model; our own tools and pipeline decide what to cut),
shaped as our Bash tool shapes it: `Exit code N` first when the command failed. Times come from
the messages' `extra.timestamp`: a reply's latency from the message before it, its tool's time
from the reply to the output.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from benchmarks.replay.trajectory import Step, ToolCall, Trajectory, Turn, UserText, make_turn

_BASH_BLOCK = re.compile(r"```(?:bash|sh)\s*\n(.*?)\n```", re.DOTALL)
_RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")
_OUTPUT = re.compile(r"<output>\n?(.*?)</output>", re.DOTALL)


def bash_output(raw: str, returncode: int | None) -> tuple[str, bool]:
    """The text our Bash tool would return for this output and exit code, and whether it is an error."""
    text = raw.rstrip("\n")
    if returncode:
        head = f"Exit code {returncode}" if returncode > 0 else f"Killed by signal {-returncode}"
        return (f"{head}\n{text}" if text else head), True
    return text or "(no output)", False


def _tool_output(message: dict[str, Any]) -> tuple[str, bool]:
    extra = message.get("extra") if isinstance(message.get("extra"), dict) else {}
    content = str(message.get("content") or "")
    raw = extra.get("raw_output")
    code = extra.get("returncode")
    if not isinstance(raw, str):
        match = _OUTPUT.search(content)
        raw = match.group(1) if match else content
    if not isinstance(code, int):
        found = _RETURNCODE.search(content)
        code = int(found.group(1)) if found else None
    return bash_output(raw, code)


def _command_of(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
    if isinstance(arguments, dict):
        return str(arguments.get("command", ""))
    return ""


def _timestamp(message: dict[str, Any]) -> float | None:
    extra = message.get("extra") if isinstance(message.get("extra"), dict) else {}
    value = extra.get("timestamp")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _gap(later: float | None, earlier: float | None) -> float | None:
    return None if later is None or earlier is None else max(0.0, later - earlier)


def convert_mini_swe(data: dict[str, Any], *, name: str, source: str) -> Trajectory:
    messages = [m for m in data.get("messages", []) if isinstance(m, dict)]
    outputs = {str(m.get("tool_call_id")): _tool_output(m) for m in messages if m.get("role") == "tool"}
    turns: list[Turn] = []
    user: list[UserText] = []
    steps: list[Step] = []
    waiting_for_text_output: ToolCall | None = None
    # When the last timed message and the last reply were written.
    previous_at: float | None = None
    reply_at: float | None = None
    for message in messages:
        role = message.get("role")
        content = str(message.get("content") or "")
        at = _timestamp(message)
        earlier, previous_at = previous_at, at if at is not None else previous_at
        if role == "tool" and steps and at is not None:
            steps[-1].tool_seconds = _gap(at, reply_at)
        if role == "assistant":
            waiting_for_text_output = None
            calls = message.get("tool_calls") or []
            tools = []
            for call in calls:
                output, is_error = outputs.get(str(call.get("id")), ("(no output)", False))
                tools.append(ToolCall(name="Bash", input={"command": _command_of(call)}, output=output, is_error=is_error))
            if not calls:
                # The text format: one ```bash block is the action; its output is the next user message.
                blocks = _BASH_BLOCK.findall(content)
                if len(blocks) == 1:
                    waiting_for_text_output = ToolCall(name="Bash", input={"command": blocks[0]})
                    tools.append(waiting_for_text_output)
            steps.append(Step(text=content or None, tools=tools, model_seconds=_gap(at, earlier)))
            reply_at = at
        elif role == "user":
            if waiting_for_text_output is not None:
                waiting_for_text_output.output, waiting_for_text_output.is_error = _tool_output(message)
                waiting_for_text_output = None
                continue
            if steps:
                turns.append(make_turn(user, steps))
                user, steps = [], []
            user.append(UserText(text=content))
    if user or steps:
        turns.append(make_turn(user, steps))
    return Trajectory(name=name, source=source, turns=turns)


def load_mini_swe(path: Path, *, name: str, source: str) -> Trajectory:
    return convert_mini_swe(json.loads(path.read_text(encoding="utf-8")), name=name, source=source)
