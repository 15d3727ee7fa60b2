"""How hook runs enter the history and the transcript, as Claude Code records them.

What a hook tells the model is a meta user entry carrying Claude Code's `attachment` (written
as an `attachment` record: `hook_additional_context` for context, `hook_blocking_error` for a
blocking hook's feedback); its text for the model is derived from the attachment alone, so a
resumed session (ours or Claude Code's) sends the same bytes. A Stop hook run is a `system`
record of subtype `stop_hook_summary`.
"""

from __future__ import annotations

from typing import Any

from agent_repl.core.hooks.io import HookOutcome
from agent_repl.core.model.messages import SystemMessage, UserMessage

# Attachment types that hold text for the model (other hook attachments are the user's only);
# the loop records an output-budget nudge the same way.
MODEL_ATTACHMENTS = frozenset({"hook_additional_context", "hook_blocking_error", "token_budget_continuation"})


def attachment_text(attachment: dict[str, Any]) -> str:
    """The model's text for an attachment we send."""
    content = attachment.get("content")
    texts = [str(c) for c in content] if isinstance(content, list) else [str(content or "")]
    body = "\n".join(t for t in texts if t)
    if attachment.get("type") == "token_budget_continuation":
        return body
    name = attachment.get("hookName") or attachment.get("hookEvent") or "hook"
    if attachment.get("type") == "hook_blocking_error":
        return f"{name} hook feedback:\n{body}"
    return f"<system-reminder>\n{name} hook additional context:\n{body}\n</system-reminder>"


def hook_message(kind: str, outcome: HookOutcome, texts: list[str], *, tool_use_id: str | None = None) -> UserMessage:
    names = sorted({run.hook.name for run in outcome.runs}) or [outcome.event]
    attachment: dict[str, Any] = {
        "type": kind,
        "hookName": ", ".join(names),
        "hookEvent": outcome.event,
        "content": list(texts),
    }
    if tool_use_id is not None:
        attachment["toolUseID"] = tool_use_id
    return UserMessage(content=attachment_text(attachment), is_meta=True, attachment=attachment)


def hook_messages(outcome: HookOutcome, *, tool_use_id: str | None = None) -> list[UserMessage]:
    """What the model is told after an event's hooks ran: their feedback, then their context."""
    messages = []
    if outcome.feedback:
        messages.append(hook_message("hook_blocking_error", outcome, outcome.feedback, tool_use_id=tool_use_id))
    if outcome.context:
        messages.append(hook_message("hook_additional_context", outcome, outcome.context, tool_use_id=tool_use_id))
    return messages


def stop_hook_summary(outcome: HookOutcome, *, tool_use_id: str) -> SystemMessage:
    """Claude Code's record of a Stop (or SubagentStop) hook round; `hookErrors` holds what
    blocked the stop, `preventedContinuation` a hook's `continue: false`."""
    return SystemMessage(
        subtype="stop_hook_summary",
        level="suggestion",
        metadata={
            "hookCount": len(outcome.runs),
            "hookInfos": [{"command": run.hook.command} for run in outcome.runs],
            "hookErrors": [*outcome.failures, *outcome.feedback],
            "preventedContinuation": outcome.stop_turn,
            "stopReason": outcome.stop_reason,
            "hasOutput": outcome.has_output,
            "toolUseID": tool_use_id,
        },
    )


def failure_notices(outcome: HookOutcome) -> list[SystemMessage]:
    """One warning line per failed hook, and the hooks' messages for the user."""
    lines = [SystemMessage(subtype="informational", content=text, level="warning") for text in outcome.failures]
    lines += [SystemMessage(subtype="informational", content=text, level="info") for text in outcome.notices]
    return lines
