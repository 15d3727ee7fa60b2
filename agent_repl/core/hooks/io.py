"""What a hook reads on stdin and what its answer means, in Claude Code's field names.

Input: the common fields (`session_id`, `transcript_path`, `cwd`, `permission_mode`,
`hook_event_name`) and the event's own. Answer: the exit code (0 ok; 2 blocks, its stderr going
to the model or to the user as each event defines; anything else is a failure shown to the user
while the work goes on) or, on exit 0, a JSON object on stdout (`continue`, `stopReason`,
`suppressOutput`, `systemMessage`, `decision`, `reason`, `hookSpecificOutput`). Plain stdout of
`UserPromptSubmit`, `SessionStart` and `PreCompact` hooks is context for the model.

The input and answer models are agent_repl.core.hooks.payloads, imported when a hook runs: a
session without hooks, or whose hooks do not match, never builds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from agent_repl.core.config.hooks import ConfiguredHook

if TYPE_CHECKING:
    from agent_repl.core.hooks.payloads import HookOutput

# Exit code 2: the events whose stderr the model reads (the others show it to the user).
FEEDBACK_TO_MODEL = frozenset({"PreToolUse", "PostToolUse", "Stop", "SubagentStop"})
# Exit 2 (or `decision: block`) stops what the event is about.
BLOCKABLE = frozenset({"PreToolUse", "UserPromptSubmit", "Stop", "SubagentStop"})
# Exit 0 with plain stdout: context for the model.
STDOUT_IS_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart", "PreCompact"})


@dataclass
class HookRun:
    """One command's run: how it ended and what it said (already redacted and size-limited)."""

    hook: ConfiguredHook
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    duration_ms: int = 0
    # Why it gave no answer: it could not start, timed out, or wrote JSON that is not an answer.
    error: str | None = None
    output: HookOutput | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_code in (0, 2)

    @property
    def blocked(self) -> bool:
        return self.error is None and self.exit_code == 2

    def summary(self) -> str:
        """One line for /hooks and failure notices."""
        if self.error:
            return self.error
        text = f"exit {self.exit_code} in {self.duration_ms} ms"
        said = (self.stderr if self.exit_code else self.stdout).strip().splitlines()
        return f"{text}: {said[0][:120]}" if said else text


@dataclass
class HookOutcome:
    """What the hooks of one event decided together."""

    event: str
    runs: list[HookRun] = field(default_factory=list)
    # The event's action is stopped (a tool call denied, a prompt refused, a stop prevented).
    blocked: bool = False
    # For the model: why it was blocked (a Stop hook's instructions, a denial's reason).
    feedback: list[str] = field(default_factory=list)
    # Context for the model (`additionalContext`, or plain stdout where that is context).
    context: list[str] = field(default_factory=list)
    # For the user: system messages, stderr of a blocking hook whose event shows it to the user.
    notices: list[str] = field(default_factory=list)
    # A hook failed (a crash, a timeout, a bad answer): one line each, shown to the user.
    failures: list[str] = field(default_factory=list)
    # PreToolUse: the strongest decision (deny > ask > allow) and its reason.
    permission: Literal["allow", "deny", "ask"] | None = None
    permission_reason: str = ""
    # `continue: false`: the turn ends after this event, with the hook's `stopReason`.
    stop_turn: bool = False
    stop_reason: str = ""

    @property
    def has_output(self) -> bool:
        return any(r.stdout.strip() or r.stderr.strip() for r in self.runs)


_STRENGTH = {None: 0, "allow": 1, "ask": 2, "deny": 3}


def interpret(event: str, runs: list[HookRun]) -> HookOutcome:
    outcome = HookOutcome(event, runs)
    for run in runs:
        name = run.hook.name
        if run.error is not None:
            outcome.failures.append(f"{name} hook failed: {run.error} ({run.hook.command})")
            continue
        if run.exit_code == 2:
            message = run.stderr.strip() or f"{name} hook exited with code 2 and gave no reason"
            if event in BLOCKABLE:
                outcome.blocked = True
            if event == "PreToolUse":
                _decide(outcome, "deny", message)
            elif event in FEEDBACK_TO_MODEL:
                outcome.feedback.append(message)
            else:
                outcome.notices.append(f"{name} hook: {message}")
            continue
        if run.exit_code != 0:
            said = run.stderr.strip() or run.stdout.strip() or "no output"
            outcome.failures.append(f"{name} hook failed with exit code {run.exit_code}: {said}")
            continue
        _read_answer(outcome, event, run)
    return outcome


def _read_answer(outcome: HookOutcome, event: str, run: HookRun) -> None:
    answer = run.output
    if answer is None:
        if event in STDOUT_IS_CONTEXT and run.stdout.strip():
            outcome.context.append(run.stdout.strip())
        return
    if answer.systemMessage:
        outcome.notices.append(answer.systemMessage)
    if not answer.continue_:
        outcome.stop_turn = True
        outcome.stop_reason = outcome.stop_reason or answer.stopReason or f"{run.hook.name} hook stopped the turn"
    specific = answer.hookSpecificOutput
    if specific is not None and specific.additionalContext:
        outcome.context.append(specific.additionalContext)
    reason = answer.reason or ""
    if event == "PreToolUse":
        decision = specific.permissionDecision if specific is not None else None
        if decision is None and answer.decision is not None:
            decision = "allow" if answer.decision == "approve" else "deny"
        if decision is not None:
            _decide(outcome, decision, (specific.permissionDecisionReason if specific else None) or reason)
        if specific is not None and specific.updatedInput is not None:
            outcome.failures.append(
                f"{run.hook.name} hook asked to change the tool's input; agent-repl never rewrites a tool call, "
                "so it runs as the model wrote it (or not at all)"
            )
        return
    if answer.decision == "block":
        if event in BLOCKABLE:
            outcome.blocked = True
        if event == "UserPromptSubmit":
            outcome.notices.append(reason or f"{run.hook.name} hook refused the prompt")
        else:
            outcome.feedback.append(reason or f"{run.hook.name} hook gave no reason")


def _decide(outcome: HookOutcome, decision: Literal["allow", "deny", "ask"], reason: str) -> None:
    if _STRENGTH[decision] > _STRENGTH[outcome.permission]:
        outcome.permission = decision
        outcome.permission_reason = reason
    if decision == "deny":
        outcome.blocked = True
