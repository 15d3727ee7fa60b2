"""What the loop needs to recover from a full context or a failing request (docs/architecture.md 4.2).

The loop stays ignorant of how compaction works: it matches the pipeline's actions, asks the
session's `Compaction` (see agent_repl.core.loop.turn_session), and classifies API errors with the pure
functions here; the recovery steps themselves are in agent_repl.core.loop.recovery.
"""

from __future__ import annotations

from typing import Any, Literal

CompactTrigger = Literal["auto", "manual", "reactive"]

# Raise the output cap once, then ask the model to go on, at most this many times.
ESCALATED_MAX_OUTPUT_TOKENS = 64_000
# Stop reasons of a reply that ended before it was finished (its last tool call may be partial).
CUT_OFF_STOP_REASONS = ("max_tokens", "model_context_window_exceeded")
MAX_OUTPUT_RECOVERY_NUDGES = 3
CONTINUE_NUDGE = (
    "Your last reply hit the output token limit and was cut off. Continue exactly where it stopped, "
    "without apologizing or repeating anything. If much remains, split the rest into smaller steps."
)


def _error_body(exc: BaseException) -> dict[str, Any]:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        return error if isinstance(error, dict) else body
    return {}


def is_prompt_too_long(exc: BaseException) -> bool:
    status = getattr(exc, "status_code", None)
    message = str(_error_body(exc).get("message") or "")
    return status in (400, 413) and ("prompt is too long" in message or _error_body(exc).get("type") == "request_too_large")


def is_request_too_large(exc: BaseException) -> bool:
    """A 413: the body is over the size limit (32 MB), whatever its token count."""
    return getattr(exc, "status_code", None) == 413 or _error_body(exc).get("type") == "request_too_large"


def rejects_web_tools(exc: BaseException) -> bool:
    """A 400 that names the API's web tools: the organization (or a gateway in front of the API) has
    not enabled them, so every request that declares them would fail the same way."""
    message = str(_error_body(exc).get("message") or "")
    return getattr(exc, "status_code", None) == 400 and ("web_search" in message or "web_fetch" in message)


def is_overloaded(exc: BaseException) -> bool:
    return getattr(exc, "status_code", None) == 529 or _error_body(exc).get("type") == "overloaded_error"
