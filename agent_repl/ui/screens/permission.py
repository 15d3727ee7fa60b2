"""The permission prompts: Bash's keyboard-first modal (y once, a always, n or Esc deny) here, the
file-change and plan prompts in `edit_permission`, and the asker that picks between them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_repl.core.diffs import FileChange
from agent_repl.core.permission_mode import PlanProposal
from agent_repl.core.permissions import Answer, Decision, PermissionRequest, as_answer
from agent_repl.core.visible import show_controls


class PermissionScreen(ModalScreen[Decision]):
    BINDINGS = [
        Binding("y", "decide('allow_once')", "allow once"),
        Binding("a", "decide('allow_always')", "always allow"),
        Binding("n", "decide('deny')", "deny"),
        Binding("escape", "decide('deny')", "deny"),
    ]

    def __init__(self, request: PermissionRequest) -> None:
        super().__init__(classes="permission")
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        tool = request.tool_name
        rules = [r[len(tool) + 1 : -1] if r.startswith(f"{tool}(") else r for r in request.always_rules]
        rule = show_controls(", ".join(rules), newlines=False) or None
        options = [Option(Text.assemble(("y", "bold"), "  Yes, run it once"), id=Decision.ALLOW_ONCE.value)]
        if rule is not None:
            options.append(
                Option(
                    Text.assemble(("a", "bold"), "  Yes, and always allow ", (rule, "bold"), " in this project"),
                    id=Decision.ALLOW_ALWAYS.value,
                )
            )
        options.append(Option(Text.assemble(("n", "bold"), "  No (esc)"), id=Decision.DENY.value))
        with Vertical(id="permission-dialog"):
            yield Static(Text(f"Allow {show_controls(request.tool_name)}?", style="bold"), id="permission-title")
            # The whole command, every control character visible: the dialog never shows less than runs.
            with VerticalScroll(id="permission-command-box"):
                yield Static(Text(show_controls(request.key) or "(no command)"), id="permission-command")
            if request.description:
                yield Static(Text(show_controls(request.description), style="dim"), id="permission-description")
            yield OptionList(*options, id="permission-options")

    def on_mount(self) -> None:
        self.query_one(OptionList).highlighted = 0
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(Decision(event.option.id))

    def action_decide(self, value: str) -> None:
        if value == Decision.ALLOW_ALWAYS.value and self.request.always_rule() is None:
            return  # nothing can be saved for this command: the choice is not offered
        self.dismiss(Decision(value))


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

    async def ask(self, request: PermissionRequest) -> Answer:
        from agent_repl.commands.allow_rules import AllowRuleError, persist_allow_rule
        from agent_repl.ui.screens.edit_permission import EditPermissionScreen, PlanApprovalScreen

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
        self.app.push_screen(screen, callback=answered)
        answer = await future
        self._pending = None
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

    def cancel(self) -> None:
        """Deny the question still open (the app is closing)."""
        if self._pending is not None and not self._pending.done():
            self._pending.set_result(Answer(Decision.DENY))
