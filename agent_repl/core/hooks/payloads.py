"""A hook's JSON in both directions, as pydantic models in Claude Code's field names: the input
each event writes to its hooks' stdin, and the answer a hook may print on exit 0 (what that
answer means is agent_repl.core.hooks.io). Imported when a hook runs, not with every session.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    session_id: str
    transcript_path: str
    cwd: str
    permission_mode: str
    hook_event_name: str


class PreToolUseInput(_Input):
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str


class PostToolUseInput(PreToolUseInput):
    tool_response: Any


class UserPromptSubmitInput(_Input):
    prompt: str


class StopInput(_Input):
    stop_hook_active: bool


class SubagentStopInput(StopInput):
    agent_id: str = ""
    agent_transcript_path: str = ""


class PreCompactInput(_Input):
    trigger: Literal["manual", "auto"]
    custom_instructions: str


class SessionStartInput(_Input):
    source: Literal["startup", "resume", "clear", "compact"]
    model: str = ""


class SessionEndInput(_Input):
    reason: Literal["clear", "logout", "prompt_input_exit", "other"]


class NotificationInput(_Input):
    message: str
    notification_type: str = ""


INPUT_MODELS: dict[str, type[_Input]] = {
    "PreToolUse": PreToolUseInput,
    "PostToolUse": PostToolUseInput,
    "UserPromptSubmit": UserPromptSubmitInput,
    "Stop": StopInput,
    "SubagentStop": SubagentStopInput,
    "PreCompact": PreCompactInput,
    "SessionStart": SessionStartInput,
    "SessionEnd": SessionEndInput,
    "Notification": NotificationInput,
}


class HookSpecificOutput(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    hookEventName: str | None = None
    permissionDecision: Literal["allow", "deny", "ask"] | None = None
    permissionDecisionReason: str | None = None
    additionalContext: str | None = None
    # Accepted so a Claude Code hook validates; a tool's input is never rewritten here.
    updatedInput: dict[str, Any] | None = None


class HookOutput(BaseModel):
    """A hook's JSON answer (exit 0). Unknown keys make it invalid, reported as the hook's failure."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    continue_: bool = Field(default=True, alias="continue")
    stopReason: str | None = None
    suppressOutput: bool = False
    systemMessage: str | None = None
    # "approve" and "block" are PreToolUse's older spelling of allow and deny.
    decision: Literal["approve", "block"] | None = None
    reason: str | None = None
    hookSpecificOutput: HookSpecificOutput | None = None


def parse_output(stdout: str) -> tuple[HookOutput | None, str | None]:
    """The JSON answer in stdout, or None when stdout is plain text; the second value says why a
    JSON-looking stdout is not a valid answer."""
    text = stdout.strip()
    if not text.startswith("{"):
        return None, None
    try:
        data = json.loads(text)
    except ValueError:
        return None, None  # text that only starts with a brace
    try:
        return HookOutput.model_validate(data), None
    except ValidationError as exc:
        fields = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        return None, f"its JSON answer is not valid ({fields})"
