"""Hooks the SDK program registers at `initialize`: each is answered by one of its callbacks.

They run among the session's own hooks, under the same events and matchers; the runner asks
the program (`hook_callback`) instead of starting a command, and reads its answer as a
command hook's JSON output.
"""

from __future__ import annotations

from typing import Any

from agent_repl.core.config.hooks import ConfiguredHook
from agent_repl.core.hooks.payloads import INPUT_MODELS
from agent_repl.sdk.wire import Wire
from agent_repl.session import Session

DEFAULT_TIMEOUT_S = 60.0


def register_hooks(session: Session, wire: Wire, config: dict[str, Any]) -> bool:
    """Add the program's hooks (`{event: [{matcher, hookCallbackIds, timeout}]}`) to the session."""
    added: list[ConfiguredHook] = []
    for event, matchers in config.items():
        if event not in INPUT_MODELS or not isinstance(matchers, list):
            continue
        for entry in matchers:
            if not isinstance(entry, dict):
                continue
            timeout = entry.get("timeout")
            for callback_id in entry.get("hookCallbackIds") or []:
                added.append(
                    ConfiguredHook(
                        event=event,
                        matcher=str(entry.get("matcher") or ""),
                        command=str(callback_id),
                        timeout=float(timeout) if isinstance(timeout, int | float) else DEFAULT_TIMEOUT_S,
                        source="user",
                        kind="callback",
                    )
                )
    if not added:
        return False

    async def call_back(hook: ConfiguredHook, payload: dict[str, Any]) -> dict[str, Any]:
        return await wire.request(
            {
                "subtype": "hook_callback",
                "callback_id": hook.command,
                "input": payload,
                "tool_use_id": payload.get("tool_use_id"),
            }
        )

    session.hooks.hooks.extend(added)
    session.hooks.call_back = call_back
    return True
