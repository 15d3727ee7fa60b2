"""The prompts for a file change (the diff, syntax-coloured) and for a plan (ExitPlanMode).

Claude Code's three choices: yes; yes and don't ask again (edits: the session switches to
acceptEdits; a plan: approved with edits accepted); no, and tell the model what to do
differently (a line of feedback, Enter to send it, Esc for a plain no).
"""

from __future__ import annotations

from rich.markdown import Markdown
from rich.text import Text
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from agent_repl.core.model.visible import show_controls
from agent_repl.core.permissions.mode import PlanProposal
from agent_repl.core.permissions.rules import Answer, Decision, PermissionRequest
from agent_repl.core.tooling.diffs import FileChange
from agent_repl.ui.command_view import visible_text
from agent_repl.ui.screens.option_picker import ready_options
from agent_repl.ui.tool_views import diff_summary, render_hunks


def edit_title(request: PermissionRequest) -> str:
    change = request.preview
    if not isinstance(change, FileChange):
        return f"Allow {request.tool_name}?"
    path = visible_text(change.display_path)  # a zero-width or look-alike character in a path shows
    if change.is_new_file:
        return f"Create {path}?"
    if request.tool_name == "Write":
        return f"Overwrite {path}?"
    return f"Make this edit to {path}?"


class ChoiceScreen(ModalScreen[Answer]):
    """A keyboard-first prompt with three answers; "no" may carry a line for the model."""

    # Priority: the answer is taken when the app reads the key, before any later key is routed, so
    # keys typed right after n land in the feedback line and never reach the option list.
    BINDINGS = [
        Binding("y", "decide('allow_once')", "yes", priority=True),
        Binding("a", "decide('allow_always')", "yes, always", priority=True),
        Binding("shift+tab", "decide('allow_always')", "yes, always", show=False, priority=True),
        Binding("n", "decide('deny')", "no", priority=True),
        Binding("escape", "escape", "no"),
    ]
    AUTO_FOCUS = "#permission-options"  # not the diff above it

    def __init__(self, request: PermissionRequest) -> None:
        super().__init__(classes="permission")
        self.request = request
        self.asking_feedback = False

    def options(self) -> list[Option]:
        raise NotImplementedError

    def body(self) -> ComposeResult:
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        with Vertical(id="permission-dialog"):
            yield from self.body()
            yield ready_options(*self.options(), id="permission-options")
            feedback = Input(placeholder="what should the model do instead? (Enter sends, Esc: just no)", id="permission-feedback")
            feedback.display = False
            yield feedback

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if not self.asking_feedback:  # an Enter that left the list before n: the no stands
            self.action_decide(str(event.option.id))

    def action_decide(self, value: str) -> None:
        if self.asking_feedback:
            raise SkipAction  # after n, y/a/n are letters of the feedback
        decision = Decision(value)
        if decision is Decision.ALLOW_ALWAYS and not self._has_always():
            return
        if decision is Decision.DENY:
            self._ask_feedback()
            return
        self.dismiss(Answer(decision))

    def _has_always(self) -> bool:
        return any(o.id == Decision.ALLOW_ALWAYS.value for o in self.options())

    def _ask_feedback(self) -> None:
        self.asking_feedback = True
        box = self.query_one("#permission-feedback", Input)
        box.display = True
        self.set_focus(box)  # now, not later: the next key is routed to the line

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(Answer(Decision.DENY, event.value.strip()))

    def action_escape(self) -> None:
        """Esc: no, and stop the turn; in the feedback line (after n), just no."""
        self.dismiss(Answer(Decision.DENY, interrupt=not self.asking_feedback))


class EditPermissionScreen(ChoiceScreen):
    def body(self) -> ComposeResult:
        change = self.request.preview
        yield Static(Text(edit_title(self.request), style="bold"), id="permission-title")
        if isinstance(change, FileChange):
            yield Static(Text(f"{diff_summary(change.hunks)}", style="dim"), id="permission-description")
            with VerticalScroll(id="permission-diff"):
                yield Static(render_hunks(change.hunks, change.path), id="permission-diff-text")
            if change.outside_project:
                yield Static(Text("This file is outside the project.", style="yellow"), id="permission-outside")
            if change.protected:
                yield Static(Text(show_controls(change.protected), style="yellow"), id="permission-protected")

    def options(self) -> list[Option]:
        change = self.request.preview
        # Asked every time: outside the project, or a protected file ("always" is not offered).
        outside = isinstance(change, FileChange) and (change.outside_project or bool(change.protected))
        options = [Option(Text.assemble(("y", "bold"), "  Yes"), id=Decision.ALLOW_ONCE.value)]
        if not outside:
            options.append(
                Option(
                    Text.assemble(("a", "bold"), "  Yes, and don't ask again for edits this session (shift+tab)"),
                    id=Decision.ALLOW_ALWAYS.value,
                )
            )
        options.append(
            Option(Text.assemble(("n", "bold"), "  No, and tell the model what to do differently (esc)"), id=Decision.DENY.value)
        )
        return options


class PlanApprovalScreen(ChoiceScreen):
    def body(self) -> ComposeResult:
        preview = self.request.preview
        plan = preview.plan if isinstance(preview, PlanProposal) else ""
        yield Static(Text("Here is the plan. Proceed?", style="bold"), id="permission-title")
        with VerticalScroll(id="permission-diff"):
            yield Static(Markdown(show_controls(plan)), id="permission-plan")

    def options(self) -> list[Option]:
        return [
            Option(Text.assemble(("a", "bold"), "  Yes, and accept edits without asking"), id=Decision.ALLOW_ALWAYS.value),
            Option(Text.assemble(("y", "bold"), "  Yes, and ask before each edit"), id=Decision.ALLOW_ONCE.value),
            Option(Text.assemble(("n", "bold"), "  No, keep planning (say what to change)"), id=Decision.DENY.value),
        ]
