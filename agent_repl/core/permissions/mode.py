"""Permission modes, as Claude Code has them: `default`, `acceptEdits` and `plan`.

- default: file edits and commands ask first (unless a rule decides);
- acceptEdits: edits of files inside the project run without asking; commands still ask, and so
  does any write outside the project;
- plan: only read-only tools run; the model researches and presents a plan with ExitPlanMode,
  and the user's approval switches the mode back.

Shift+Tab cycles them in the front ends; `--permission-mode` picks one at start. The mode lives
in a small holder shared by the session and the tool runtime, which notes every change so the
front ends can show it and the model can be told.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class PermissionMode(StrEnum):
    DEFAULT = "default"
    ACCEPT_EDITS = "acceptEdits"
    PLAN = "plan"


MODE_CYCLE = (PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS, PermissionMode.PLAN)

# One short line per mode for the status line (the default mode shows nothing).
MODE_LABELS = {
    PermissionMode.DEFAULT: "",
    PermissionMode.ACCEPT_EDITS: "⏵⏵ accept edits on",
    PermissionMode.PLAN: "⏸ plan mode on",
}


def parse_mode(text: str) -> PermissionMode:
    """`default`, `acceptEdits` or `plan` (case and `-`/`_` ignored). Raises ValueError."""
    wanted = text.strip().replace("-", "").replace("_", "").lower()
    for mode in PermissionMode:
        if mode.value.lower() == wanted:
            return mode
    raise ValueError(f"unknown permission mode {text!r} (expected one of: {', '.join(m.value for m in PermissionMode)})")


def next_mode(mode: PermissionMode) -> PermissionMode:
    return MODE_CYCLE[(MODE_CYCLE.index(mode) + 1) % len(MODE_CYCLE)]


@dataclass(frozen=True)
class PlanProposal:
    """What the ExitPlanMode prompt shows: the plan the model asks the user to approve."""

    plan: str


@dataclass
class ModeHolder:
    mode: PermissionMode = PermissionMode.DEFAULT
    # Bumped on every change, so a consumer can tell that it missed one.
    changes: int = 0

    def set(self, mode: PermissionMode) -> bool:
        if mode is self.mode:
            return False
        self.mode = mode
        self.changes += 1
        return True

    def cycle(self) -> PermissionMode:
        self.set(next_mode(self.mode))
        return self.mode


PLAN_MODE_ON = (
    "<system-reminder>\nPlan mode is on. The user wants a plan before anything changes: do not edit "
    "files, run commands that change anything, or otherwise alter the system. Research with the "
    "read-only tools (Read, Grep, Glob), ask about what is unclear, then present your plan with the "
    "ExitPlanMode tool for the user to approve.\n</system-reminder>"
)
PLAN_MODE_OFF = (
    "<system-reminder>\nPlan mode is off: you may edit files and run commands again (the user may be "
    "asked to approve them).\n</system-reminder>"
)


def mode_reminder(announced: PermissionMode, current: PermissionMode) -> str:
    """What to tell the model at the start of a turn when plan mode began or ended since it was told."""
    if (current is PermissionMode.PLAN) == (announced is PermissionMode.PLAN):
        return ""
    return PLAN_MODE_ON if current is PermissionMode.PLAN else PLAN_MODE_OFF


PLAN_MODE_REFUSAL = (
    "Plan mode is on: only read-only tools run until the user approves a plan. Do not try to change "
    "files or run commands now; research with the read-only tools, then present your plan with ExitPlanMode."
)


def denied_text(tool_name: str, what: str, feedback: str) -> str:
    """What the model hears when the user says no."""
    if feedback.strip():
        return (
            f"The user declined this {tool_name} call{what} and said: {feedback.strip()}\n"
            "Do what they asked instead; do not retry the same call."
        )
    return (
        f"Permission to use {tool_name}{what} was denied. Do not retry the same call; "
        "ask the user or try another way."
    )
