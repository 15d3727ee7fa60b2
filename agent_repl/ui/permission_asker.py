"""The app's approval callback: a permission question in a modal, and an "always" answer saved.

The modal screens (agent_repl.ui.screens.permission, edit_permission) are imported with the first
question, not with the app: most sessions start, and many end, without one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.app import App
from textual.screen import ModalScreen

from agent_repl.core.permissions.mode import PlanProposal
from agent_repl.core.permissions.rules import Answer, Decision, PermissionRequest, as_answer
from agent_repl.core.tooling.diffs import FileChange


class PermissionAsker:
    """Asks in the modal and saves an "always" answer to the project's settings file.

    A file that cannot be updated is reported through `notify`; the rule then holds for this
    session only (the policy keeps it in memory either way).
    """

    def __init__(self, app: App, cwd: Path, notify: Callable[[str, str], Awaitable[None]]) -> None:
        self.app = app
        self.cwd = cwd
        self.notify = notify
        self._pending: asyncio.Future[Answer] | None = None
        self._screen: ModalScreen | None = None

    async def ask(self, request: PermissionRequest) -> Answer:
        from agent_repl.commands.allow_rules import AllowRuleError, persist_allow_rule
        from agent_repl.ui.screens.edit_permission import EditPermissionScreen, PlanApprovalScreen
        from agent_repl.ui.screens.permission import PermissionScreen

        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._pending = future

        def answered(answer: Decision | Answer | None) -> None:
            if not future.done():
                future.set_result(as_answer(answer or Decision.DENY))

        if isinstance(request.preview, FileChange):
            screen: ModalScreen = EditPermissionScreen(request)
        elif isinstance(request.preview, PlanProposal):
            screen = PlanApprovalScreen(request)
        else:
            screen = PermissionScreen(request)
        self._screen = screen
        self.app.push_screen(screen, callback=answered)
        try:
            answer = await future
        finally:
            self._pending = self._screen = None
        # Only a command's "always" is a rule to keep; for edits and plans it changes the mode.
        if answer.decision is Decision.ALLOW_ALWAYS and request.preview is None:
            for rule in request.always_rules:
                try:
                    path = persist_allow_rule(self.cwd, rule)
                except AllowRuleError as exc:
                    await self.notify(f"{rule} is allowed for this session only: {exc}", "error")
                else:
                    await self.notify(f"always allowing {rule} (saved to {path})", "info")
        return answer

    def interrupt(self) -> bool:
        """Ctrl+C with a question open: take it down and answer no, stopping the turn (as Esc in it
        does). False when no question is open."""
        screen = self._screen
        if screen is None or self._pending is None or self._pending.done():
            return False
        while screen in self.app.screen_stack and self.app.screen is not screen:
            self.app.pop_screen()  # a viewer opened from the question
        if screen in self.app.screen_stack:
            screen.dismiss(Answer(Decision.DENY, interrupt=True))
        else:
            self._pending.set_result(Answer(Decision.DENY, interrupt=True))
        return True

    def cancel(self) -> None:
        """Deny the question still open (the app is closing)."""
        if self._pending is not None and not self._pending.done():
            self._pending.set_result(Answer(Decision.DENY))
