"""Permissions driven by the SDK: its `can_use_tool` answers and the modes it sets.

What no rule decides is asked of the program as a `can_use_tool` control request; its answer
may allow (maybe with a changed input and rule or mode changes for the rest of the session) or
deny (with a message for the model, and maybe an interrupt of the turn).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_repl.core.permissions.mode import PermissionMode, parse_mode
from agent_repl.core.permissions.rules import Answer, Decision, PermissionRequest
from agent_repl.sdk.wire import Wire
from agent_repl.session import Session

# The SDK's modes that are not one of the session's own: every call runs, or nothing is asked.
BYPASS = "bypassPermissions"
DONT_ASK = "dontAsk"


@dataclass
class SdkPermissions:
    session: Session
    wire: Wire
    # Called when a denial asks to stop the turn.
    interrupt: Callable[[], None]
    # Whether the session started bypassing permissions: only then may it switch back to that.
    may_bypass: bool = False

    @property
    def mode_name(self) -> str:
        return self.session.permission_mode_name

    def set_mode(self, name: str) -> None:
        """Switch the permission mode by its SDK name (raises ValueError for an unknown one, and
        for bypassPermissions in a session that did not start with it)."""
        settings = self.session.settings
        if name == BYPASS and not self.may_bypass:
            raise ValueError(
                "bypassPermissions can only be set in a session started with it "
                "(--permission-mode bypassPermissions or --dangerously-skip-permissions)"
            )
        mode = PermissionMode.DEFAULT if name in (BYPASS, DONT_ASK) else parse_mode(name)
        self.session.mode.set(mode)
        settings.skip_permissions = self.session.permissions.skip_all = name == BYPASS
        settings.dont_ask = name == DONT_ASK

    async def ask(self, request: PermissionRequest) -> Answer:
        """The approval callback: the SDK decides."""
        if self.mode_name == DONT_ASK:
            return Answer(Decision.DENY, "not allowed by a rule, and this session asks nobody (dontAsk)")
        body: dict[str, Any] = {
            "subtype": "can_use_tool",
            "tool_name": request.tool_name,
            "input": request.tool_input or {},
            "tool_use_id": request.tool_use_id,
            "permission_suggestions": self._suggestions(request),
        }
        if request.reason:
            body["decision_reason"] = request.reason
        if request.reads and request.key:
            body["blocked_path"] = request.key
        answer = await self.wire.request(body)
        if answer.get("behavior") == "allow":
            self._apply_updates(answer.get("updatedPermissions") or [])
            updated = answer.get("updatedInput")
            return Answer(Decision.ALLOW_ONCE, updated_input=updated if isinstance(updated, dict) else None)
        if answer.get("interrupt"):
            self.interrupt()
        return Answer(Decision.DENY, str(answer.get("message") or ""))

    def _suggestions(self, request: PermissionRequest) -> list[dict[str, Any]]:
        rules = [_rule_value(text) for text in request.always_rules]
        if not rules:
            return []
        return [{"type": "addRules", "rules": rules, "behavior": "allow", "destination": "session"}]

    def _apply_updates(self, updates: list[Any]) -> None:
        """Rule and mode changes that come with an allow (for this session only)."""
        for update in updates:
            if not isinstance(update, dict):
                continue
            kind = update.get("type")
            if kind == "addRules" and update.get("behavior") == "allow":
                for rule in update.get("rules") or []:
                    self.session.permissions.add_allow(_rule_text(rule))
            elif kind == "setMode" and isinstance(update.get("mode"), str):
                self.set_mode(update["mode"])


def _rule_value(text: str) -> dict[str, Any]:
    tool, _, rest = text.partition("(")
    return {"toolName": tool, **({"ruleContent": rest[:-1]} if rest.endswith(")") else {})}


def _rule_text(rule: Any) -> str:
    tool = str(rule.get("toolName", "")) if isinstance(rule, dict) else ""
    content = rule.get("ruleContent") if isinstance(rule, dict) else None
    return f"{tool}({content})" if content else tool
