"""The inline REPL's permission questions: a command, an edit's diff, a plan, each answered on one line.

y/a/n answer as in the app's dialogs; Esc or Ctrl+C at the question is a "no" that also stops the
turn (`Answer.interrupt`), as in the full-screen app; Ctrl+D is a plain "no".
"""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from agent_repl.commands.allow_rules import AllowRuleError, persist_allow_rule
from agent_repl.core.model.visible import show_controls
from agent_repl.core.permissions.mode import PlanProposal
from agent_repl.core.permissions.rules import Answer, Decision, PermissionRequest
from agent_repl.core.tooling.diffs import FileChange
from agent_repl.ui.command_view import (
    MAX_NOTES,
    CommandView,
    always_label,
    as_text,
    command_notes,
    command_view,
    model_says,
    visible_text,
)
from agent_repl.ui.tool_views import diff_summary, render_hunks

STOPPED = Answer(Decision.DENY, interrupt=True)


class Stopped(Exception):
    """Esc or Ctrl+C at a question."""


class InlineQuestions:
    """Asks through the REPL's own prompt (set `prompt` once made); `bindings`, merged into the
    prompt's, make Esc stop a question."""

    def __init__(self, console: Console, cwd: Path) -> None:
        self.prompt: PromptSession[str] | None = None
        self.console = console
        self.cwd = cwd
        self.asking = False
        self.bindings = KeyBindings()

        @self.bindings.add("escape", filter=Condition(lambda: self.asking), eager=True)
        def _stop(event: KeyPressEvent) -> None:
            event.app.exit(exception=Stopped())

    async def line(self, question: str) -> str:
        """The answer typed; `Stopped` for Esc or Ctrl+C, EOFError for Ctrl+D."""
        assert self.prompt is not None
        self.asking = True
        try:
            return await self.prompt.prompt_async(question)
        except KeyboardInterrupt:
            raise Stopped from None
        finally:
            self.asking = False

    async def ask(self, request: PermissionRequest) -> Answer:
        try:
            if isinstance(request.preview, FileChange):
                return await self._change(request)
            if isinstance(request.preview, PlanProposal):
                return await self._plan(request)
            return await self._command(request)
        except Stopped:
            self.console.print(Text("no, and the turn stops", style="yellow"))
            return STOPPED
        except EOFError:
            return Answer(Decision.DENY)

    async def _feedback(self) -> str:
        try:
            return (await self.line("what should the model do instead? (empty: just no) > ")).strip()
        except (EOFError, Stopped):
            return ""

    async def _change(self, request: PermissionRequest) -> Answer:
        """An edit: the coloured diff, then yes / yes and don't ask again for edits / no with feedback."""
        console = self.console
        change = request.preview
        assert isinstance(change, FileChange)
        verb = "Create" if change.is_new_file else ("Overwrite" if request.tool_name == "Write" else "Edit")
        console.print(f"[bold yellow]{verb} {escape(visible_text(change.display_path))}?[/] "
                      f"[dim]({diff_summary(change.hunks)})[/]")  # fmt: skip
        console.print(render_hunks(change.hunks, change.path))
        if change.protected:
            console.print(f"[yellow]{escape(show_controls(change.protected))}[/]")
        asked_each_time = change.outside_project or bool(change.protected)
        if change.outside_project:
            console.print("[yellow]This file is outside the project.[/]")
        if asked_each_time:
            question = "[y] yes / [n] no, and tell the model what to do differently > "
        else:
            question = "[y] yes / [a] yes, and don't ask again for edits this session / [n] no, and say what to do instead > "
        choice = (await self.line(question)).strip().lower()[:1]
        if choice == "y":
            return Answer(Decision.ALLOW_ONCE)
        if choice == "a" and not asked_each_time:
            return Answer(Decision.ALLOW_ALWAYS)
        return Answer(Decision.DENY, await self._feedback())

    async def _plan(self, request: PermissionRequest) -> Answer:
        from rich.markdown import Markdown

        plan = request.preview.plan if isinstance(request.preview, PlanProposal) else ""
        self.console.print("[bold yellow]Here is the plan. Proceed?[/]")
        self.console.print(Markdown(show_controls(plan)))
        question = "[a] yes, and accept edits / [y] yes, and ask before each edit / [n] no, keep planning > "
        choice = (await self.line(question)).strip().lower()[:1]
        if choice in ("a", "y"):
            return Answer(Decision.ALLOW_ALWAYS if choice == "a" else Decision.ALLOW_ONCE)
        return Answer(Decision.DENY, await self._feedback())

    async def _command(self, request: PermissionRequest) -> Answer:
        console = self.console
        shell = request.tool_name == "Bash"
        rule = request.always_rule()
        below = [Text(f"  ⚠ {note}", style="red") for note in command_notes(request.key, shell=shell, limit=MAX_NOTES)]
        if description := model_says(request.description):
            below.append(Text(f"  {description}", style="dim"))
        if rule:
            below.append(Text.assemble("  [a] always allow ", (always_label(request.always_rules, request.key), "bold"),
                                       " in this project"))  # fmt: skip
        width = max(20, console.width - 4)
        # The rows left for the command once the title, the lines below it and the question are printed.
        room = console.height - 3 - sum(-(-cell_len(line.plain) // console.width) for line in below)
        view = command_view(request.key or "(no command)", width, max(3, room), shell=shell)
        console.print(Text(f"Allow {show_controls(request.tool_name)}:", style="bold yellow"))
        print_view(console, view)
        for line in below:
            console.print(line)
        more = " / [v] the whole command" if view.hidden_lines else ""
        question = f"[y] once{' / [a] always' if rule else ''}{more} / [n] deny > "
        while True:
            answer = await self.line(question)
            if answer.strip().lower()[:1] != "v":
                break
            print_view(console, command_view(request.key, width, None, shell=shell))  # all of it, to scroll back
            for note in command_notes(request.key, shell=shell):
                console.print(Text(f"  ⚠ {note}", style="red"))
        choice = answer.strip().lower()[:1]
        if choice == "y":
            return Answer(Decision.ALLOW_ONCE)
        if choice == "a" and rule:
            for each in request.always_rules:
                try:
                    path = persist_allow_rule(self.cwd, each)
                except AllowRuleError as exc:
                    console.print(f"[red]{escape(each)} is allowed for this session only: {escape(str(exc))}[/]")
                else:
                    console.print(f"[dim]always allowing {escape(each)} (saved to {escape(str(path))})[/]")
            return Answer(Decision.ALLOW_ALWAYS)
        return Answer(Decision.DENY)


def print_view(console: Console, view: CommandView) -> None:
    for line in view.lines:
        console.print(Text("  ").append_text(as_text(line)), no_wrap=True, overflow="crop")
