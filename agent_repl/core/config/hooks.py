"""Hooks as settings files hold them, in Claude Code's format.

    {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "...", "timeout": 30}]}]}}

A matcher is a tool name, a `|` list or a regular expression matched against the whole name
(`*`, an empty string or no matcher: every tool). For events without tools it is matched
against the event's kind: `SessionStart` its source (startup, resume, clear, compact),
`PreCompact` its trigger (manual, auto), `Notification` its type, `SessionEnd` its reason.
The project's own hooks run commands the repository chose: they apply only in a trusted folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

HookEvent = Literal[
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
    "Notification",
]
HOOK_EVENTS: tuple[str, ...] = get_args(HookEvent)
# Seconds a hook command may run before it is stopped, unless it sets its own `timeout`.
DEFAULT_HOOK_TIMEOUT = 60.0


class HookCommand(BaseModel):
    # Claude Code's other per-hook keys (statusMessage...) are accepted and have no effect here.
    model_config = ConfigDict(extra="ignore")

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    timeout: float | None = Field(default=None, gt=0, le=86_400)


class HookMatcher(BaseModel):
    model_config = ConfigDict(extra="forbid")

    matcher: str = ""
    hooks: list[HookCommand] = Field(default_factory=list)

    @field_validator("matcher")
    @classmethod
    def _matcher_compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"matcher {value!r} is not a valid regular expression: {exc}") from exc
        return value


HooksSettings = dict[HookEvent, list[HookMatcher]]


def matches(matcher: str, value: str | None) -> bool:
    """Whether a matcher selects `value` (a tool name, a source, a trigger)."""
    if matcher in ("", "*") or value is None:
        return True
    if re.fullmatch(r"[A-Za-z0-9_|-]+", matcher):
        return value in matcher.split("|")
    return re.fullmatch(matcher, value) is not None


@dataclass(frozen=True)
class ConfiguredHook:
    """One command under one event, where it came from, and what it answers to."""

    event: str
    matcher: str
    command: str
    timeout: float
    source: Literal["user", "project"]
    # A `callback` hook is answered by the program driving the agent (the Agent SDK); `command`
    # then names its callback.
    kind: Literal["command", "callback"] = "command"

    @property
    def name(self) -> str:
        """Claude Code's hook name: the event, and the matcher when there is one (`PreToolUse:Bash`)."""
        return f"{self.event}:{self.matcher}" if self.matcher not in ("", "*") else self.event


def configured_hooks(user: HooksSettings, project: HooksSettings, *, project_trusted: bool) -> list[ConfiguredHook]:
    """Every hook that applies, user ones first; a command listed twice for one event and
    matcher runs once."""
    found: list[ConfiguredHook] = []
    seen: set[tuple[str, str, str]] = set()
    sources: list[tuple[HooksSettings, Literal["user", "project"]]] = [(user, "user")]
    if project_trusted:
        sources.append((project, "project"))
    for hooks, source in sources:
        for event, entries in hooks.items():
            for entry in entries:
                for hook in entry.hooks:
                    key = (event, entry.matcher, hook.command)
                    if key in seen:
                        continue
                    seen.add(key)
                    timeout = hook.timeout or DEFAULT_HOOK_TIMEOUT
                    found.append(ConfiguredHook(event, entry.matcher, hook.command, timeout, source))
    return found


def hooks_trusted(settings: Any) -> bool:
    """Whether the project's own hooks may run: a trusted folder or `--trust-project`. Skipping the
    permission checks is not trust: a hook runs without any model asking for it."""
    return bool(settings.project_trusted)


def held_back_hooks(settings: Any) -> list[str]:
    """What the trust question lists: the project's hooks that wait for the folder's trust."""
    if hooks_trusted(settings):
        return []
    project: HooksSettings = settings.project_hooks
    return [
        f"{event} hook {hook.command!r} (.agent_repl/settings.json)"
        for event, entries in project.items()
        for entry in entries
        for hook in entry.hooks
    ]
