"""The full-screen app: composes the widgets and wires them to a session's event stream.

Features live in the widgets (`ui/widgets`), the screens (`ui/screens`) and the command
registry (`agent_repl.commands`); this file only routes keys, events and results between them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.driver import Driver
from textual.message import Message
from textual.widgets import Static

from agent_repl.core.model.visible import show_controls
from agent_repl.ui.gc_policy import GcPolicy
from agent_repl.ui.launcher import Launcher, LaunchError, warm_sdk_in_background
from agent_repl.ui.permission_asker import PermissionAsker
from agent_repl.ui.prompt_history import PromptHistory, history_path
from agent_repl.ui.second_press import SECOND_PRESS_WINDOW, SecondPress
from agent_repl.ui.session_display import SessionDisplay
from agent_repl.ui.widgets.conversation import DEFAULT_MAX_LINES, Conversation
from agent_repl.ui.widgets.prompt_input import PromptInput
from agent_repl.ui.widgets.status_line import StatusLine, WorkingIndicator, model_label
from agent_repl.ui.widgets.todo_panel import TodoPanel
from agent_repl.ui.widgets.tool_block import ToolBlock
from agent_repl.ui.widgets.user_status_line import UserStatusLine

if TYPE_CHECKING:
    from agent_repl.commands.registry import CommandRegistry, SessionHolder
    from agent_repl.commands.results import CommandResult
    from agent_repl.commands.submit import PromptLine, ShellLine
    from agent_repl.core.model.events import AgentEvent
    from agent_repl.core.permissions.rules import Answer, PermissionRequest
    from agent_repl.session import Session

# Commands that change the session or its view are queued behind the running turn; others answer at once.
NOT_DURING_A_TURN = {"clear", "resume", "snip", "model", "compact", "uncompact", "rewind"}
# Commands that can take a while show the working indicator.
WORKING_LABELS = {
    "compact": "Compacting",
    "context": "Measuring the context",
    "resume": "Loading the session",
}


class AgentApp(App[int]):
    # Absolute, so subclasses elsewhere (benchmarks, tests) find it too.
    CSS_PATH = str(Path(__file__).with_name("app.tcss"))
    TITLE = "agent-repl"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("ctrl+c", "ctrl_c", "exit (twice)", priority=True, show=False),
        Binding("ctrl+d", "quit", "exit", priority=True, show=False),
        Binding("escape", "interrupt", "interrupt", show=False),
        Binding("ctrl+b", "background", "run the command in the background", priority=True, show=False),
    ]

    class SessionReady(Message):
        def __init__(self, session: Session) -> None:
            super().__init__()
            self.session = session

    class AgentEventPosted(Message):
        """One event of the running turn, as the loop yielded it."""

        def __init__(self, event: AgentEvent) -> None:
            super().__init__()
            self.event = event

    class TurnFinished(Message):
        def __init__(self, reason: str, next_request_tokens: int | None = None) -> None:
            super().__init__()
            self.reason = reason
            self.next_request_tokens = next_request_tokens

    class PermissionAsked(Message):
        def __init__(self, request: PermissionRequest) -> None:
            super().__init__()
            self.request = request

    class CommandFinished(Message):
        def __init__(self, line: str, result: CommandResult) -> None:
            super().__init__()
            self.line = line
            self.result = result

    def __init__(
        self,
        launcher: Launcher,
        *,
        first_prompt: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] | None = None,
        animate: bool = True,
        max_lines: int = DEFAULT_MAX_LINES,
        warm_client: bool = True,
    ) -> None:
        super().__init__()
        self.launcher = launcher
        self.clock = clock
        self.now = now
        # Not `animate`: that is Textual's animation method on every widget and app.
        self.spinner_runs = animate
        self.max_lines = max_lines
        self.warm_client = warm_client
        self.holder: SessionHolder | None = None
        self._slash_commands: CommandRegistry | None = None
        self.pending: list[str] = [first_prompt] if first_prompt else []
        self.turn_running = False
        # A turn or a queued command is running: the next queued line waits for it.
        self.busy = False
        self._ctrl_c = SecondPress(clock)
        self._escape = SecondPress(clock)
        self._sdk_ready: asyncio.Future | None = None
        self.gc_policy = GcPolicy()
        self.permission_asker = PermissionAsker(self, launcher.cwd, self._notify)
        # Not `_closed`: Textual's message pump uses that name, and setting it drops every later message.
        self._shut_down = False
        # What to print after the app leaves the screen (the line that resumes the session).
        self.exit_note: str | None = None

    # -- layout ----------------------------------------------------------------------------

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, reading a big paste in bulk on Linux and macOS (`ui.paste_input`)."""
        from textual.drivers.linux_driver import LinuxDriver

        driver = super().get_driver_class()
        if driver is LinuxDriver:
            from agent_repl.ui.paste_input import BulkPasteDriver

            return BulkPasteDriver
        return driver

    def compose(self) -> ComposeResult:
        yield Conversation(max_lines=self.max_lines, id="conversation")
        yield WorkingIndicator(self.clock, animate=self.spinner_runs, id="working")
        yield TodoPanel(id="todos")
        yield Static("", id="hint")
        yield PromptInput(cwd=self.launcher.cwd, commands=self._command_names, id="prompt")
        yield UserStatusLine(id="user-status")
        yield StatusLine(id="status")

    @property
    def conversation(self) -> Conversation:
        return self.query_one(Conversation)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    @property
    def status(self) -> StatusLine:
        return self.query_one(StatusLine)

    def refresh_user_status(self) -> None:
        """Ask the user's status line command again (after a reply, a command, a mode change)."""
        self.query_one(UserStatusLine).request((self.status.context_tokens, self.status.context_window))

    @property
    def working(self) -> WorkingIndicator:
        return self.query_one(WorkingIndicator)

    @property
    def todos(self) -> TodoPanel:
        return self.query_one(TodoPanel)

    @property
    def session(self) -> Session | None:
        return self.holder.session if self.holder else None

    def command_registry(self) -> CommandRegistry:
        """The slash commands, imported with the first line submitted or completed, not before the
        session is shown."""
        if self._slash_commands is None:
            from agent_repl.commands import default_registry

            self._slash_commands = default_registry()
        return self._slash_commands

    def _command_names(self) -> list[str]:
        return self.command_registry().complete("", self.session) if self.holder else []

    async def _notify(self, text: str, level: str) -> None:
        await self.conversation.add_notice(text, level)

    def set_hint(self, text: str) -> None:
        self.query_one("#hint", Static).update(Text(text))

    def on_load(self) -> None:
        self.gc_policy.start()

    def on_mount(self) -> None:
        self.prompt.focus()
        self.status.refresh_line()
        self.call_after_refresh(self._boot)

    # -- starting and switching sessions -------------------------------------------------------

    def _boot(self) -> None:
        self.run_worker(self._open_first_session(), group="boot", exit_on_error=False)

    async def _open_first_session(self) -> None:
        from agent_repl.commands import SessionHolder

        previewed = await self._show_preview()
        try:
            session = await self.launcher.open(self.ask_permission, self.confirm_trust)
        except LaunchError as exc:
            self.gc_policy.started()
            self.exit(2, return_code=2, message=f"agent-repl: {exc}")
            return
        except BaseException:
            self.gc_policy.started()  # a failed start-up is over too
            raise
        self.holder = SessionHolder(session, self._reopen)
        self.prompt.prompt_history = PromptHistory(
            history_path(session.settings.home, session.cwd), redactor=session.redactor
        ).load()
        if previewed:
            with self.batch_update():  # the preview gives way to the history without a blank frame
                await self.session_display.show(session)
        else:
            await self.session_display.show(session)
        self.call_after_refresh(self.gc_policy.history_shown)
        self.query_one(UserStatusLine).configure(session)
        for notice in self.launcher.notices:
            await self.conversation.add_notice(notice, "info")
        if self.warm_client:
            self._sdk_ready = warm_sdk_in_background()
        self.post_message(self.SessionReady(session))
        self._next_pending()

    async def _show_preview(self) -> bool:
        """Draw the newest entries of the session being resumed, read from the end of its
        transcript, before the session's own opening (which reads the whole file and imports the
        session's machinery in a thread) starts; whether there were any. The session shows its own
        history in their place once it is open."""
        if self.launcher.preview is None:
            return False
        from agent_repl.tools import builtin_displays

        # In a thread: for `--continue` it lists every session of the folder first, and the
        # screen answers keys meanwhile.
        messages = await asyncio.to_thread(self.launcher.preview)
        if not messages:
            return False
        await self.conversation.load(messages, displays=builtin_displays())
        painted = asyncio.Event()
        self.call_after_refresh(painted.set)
        await painted.wait()  # drawn before the opening's thread competes for the interpreter
        return True

    async def confirm_trust(self, cwd: Path, rules: list[str]) -> bool:
        from agent_repl.ui.screens.trust import TrustScreen

        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def answered(trusted: bool | None) -> None:
            if not answer.done():
                answer.set_result(bool(trusted))

        self.push_screen(TrustScreen(cwd, rules), callback=answered)
        return await answer

    async def _reopen(self, resume, previous: Session) -> Session:
        return await self.launcher.reopen(resume, previous, self.ask_permission)

    @property
    def session_display(self) -> SessionDisplay:
        return SessionDisplay(self.conversation, self.status, self.todos)

    # -- input ---------------------------------------------------------------------------------

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        from agent_repl.commands.submit import CommandLine, submit

        if self.turn_running and self.holder is not None:
            submission = submit(event.text, self.command_registry())
            if isinstance(submission, CommandLine) and (
                submission.command is None or submission.command.name not in NOT_DURING_A_TURN
            ):
                self.run_command(event.text, queued=False)  # /cost, /context... answer at once
                return
        self.pending.append(event.text)
        self._next_pending()

    def on_prompt_input_page_requested(self, event: PromptInput.PageRequested) -> None:
        if event.direction == "up":
            self.conversation.scroll_page_up()
        else:
            self.conversation.scroll_page_down()

    def on_prompt_input_mode_cycle_requested(self, event: PromptInput.ModeCycleRequested) -> None:
        if self.session is not None:
            self.session.mode.cycle()
            self.session_display.show_mode(self.session)
            self.refresh_user_status()

    def on_prompt_input_completions_shown(self, event: PromptInput.CompletionsShown) -> None:
        shown = "  ".join(show_controls(c, newlines=False) for c in event.candidates[:20])
        self.set_hint(shown + (" …" if len(event.candidates) > 20 else ""))

    def _next_pending(self) -> None:
        """Start the next queued prompt or command when the session is free."""
        if self.holder is None or self.busy or not self.pending:
            if self.pending and self.holder is None:
                self.set_hint(f"starting… {len(self.pending)} message(s) will be sent when ready")
            elif self.pending:
                self.set_hint(f"{len(self.pending)} queued")
            return
        from agent_repl.commands.submit import CommandLine, MemoryNoteLine, submit

        text = self.pending.pop(0)
        self.set_hint(f"{len(self.pending)} queued" if self.pending else "")
        self.busy = True
        match submit(text, self.command_registry()):
            case CommandLine():
                self.run_command(text)
            case MemoryNoteLine() as note:
                self.run_command(note.remember)
            case submission:
                self.turn_running = True
                self.run_turn(submission)

    @work(group="turn", exit_on_error=False)
    async def run_turn(self, submission: ShellLine | PromptLine) -> None:
        session = self.session
        assert session is not None
        self.working.start("Working")
        reason, tokens = "error", None
        try:
            if self._sdk_ready is not None and not self._sdk_ready.done():
                self.working.label = "Loading the API client"
                await self._sdk_ready
            from agent_repl.commands.submit import turn_events
            from agent_repl.core.model.events import TurnEnded

            async for event in turn_events(session, submission):
                self.post_message(self.AgentEventPosted(event))
                if isinstance(event, TurnEnded):
                    reason, tokens = event.reason, event.next_request_tokens
        except Exception as exc:  # the loop reports API errors as events; this is a bug, shown, not fatal
            await self.conversation.add_notice(f"the turn failed: {type(exc).__name__}: {exc}", "error")
        finally:
            self.post_message(self.TurnFinished(reason, tokens))

    async def on_agent_app_agent_event_posted(self, message: AgentEventPosted) -> None:
        session = self.session
        if session is None:
            return
        await self.conversation.apply(message.event)
        from agent_repl.core.model.events import PermissionModeChanged, ToolResultEvent, UsageEvent

        match message.event:
            case PermissionModeChanged():
                self.session_display.show_mode(session)
            case ToolResultEvent(name="TodoWrite"):
                self.session_display.show_todo_result(message.event)
        self.status.apply(message.event, cost_usd=session.cost_total_usd)
        self.working.apply(message.event)
        if isinstance(message.event, PermissionModeChanged | UsageEvent):
            self.refresh_user_status()

    async def on_agent_app_turn_finished(self, message: TurnFinished) -> None:
        self.turn_running = False
        self.busy = False
        self.working.stop()
        if self.session is not None:
            self.session_display.refresh_marks(self.session)
            self.session_display.show_context_figure(self.session, message.next_request_tokens)
        self.call_after_refresh(self.gc_policy.turn_ended)
        self._next_pending()

    # -- commands --------------------------------------------------------------------------------

    @work(group="command", exit_on_error=False)
    async def run_command(self, line: str, queued: bool = True) -> None:
        try:
            await self._run_command(line)
        finally:
            if queued:
                self.busy = False
                self._next_pending()

    async def _run_command(self, line: str) -> None:
        from agent_repl.commands.registry import CommandContext, parse_command_line

        assert self.holder is not None
        registry = self.command_registry()
        parsed = parse_command_line(line)
        command = registry.get(parsed[0]) if parsed else None
        label = WORKING_LABELS.get(command.name) if command else None
        if label and not self.turn_running:
            self.working.start(label)
        try:
            result = await registry.run(line, CommandContext(self.holder, registry))
        except Exception as exc:
            from agent_repl.commands.results import TextOutput

            result = TextOutput(f"{line.split()[0]} failed: {type(exc).__name__}: {exc}", level="error")
        finally:
            if label and not self.turn_running:
                self.working.stop()
        await self.show_result(line, result)
        self.post_message(self.CommandFinished(line, result))

    async def show_result(self, line: str, result: CommandResult) -> None:
        from agent_repl.commands import results as r
        from agent_repl.ui.clipboard import deliver_export
        from agent_repl.ui.editor import open_in_editor
        from agent_repl.ui.render import render_result
        from agent_repl.ui.screens.choices import picker_for

        command = line.split()[0]
        if isinstance(result, r.ExitRequest):
            await self.action_quit()
            return
        if isinstance(result, r.PromptRequest):
            self.pending.insert(0, result.prompt)  # sent as the next turn, once this command is done
        if isinstance(result, r.EditorRequest):
            result = open_in_editor(result, self.suspend)
        if isinstance(result, r.ClipboardExport):
            result = deliver_export(result, self.copy_to_clipboard)
        now = self.now() if self.now else None
        picker = picker_for(result, now)
        if picker is not None:
            then, screen = picker
            self.push_screen(screen, callback=lambda choice: self._pick(then, choice))
            return
        session = self.session
        if isinstance(result, r.SessionSwitched) and session is not None:
            await self.session_display.show(session)
            self.call_after_refresh(self.gc_policy.history_shown)
            self.query_one(UserStatusLine).configure(session)
        elif session is not None and self.conversation.shown_before(session.messages):
            await self.session_display.show(session)
        elif session is not None:
            await self.conversation.add_messages(session.messages)
            self.session_display.refresh_marks(session)
        if isinstance(result, r.RewindDone) and session is not None:
            self.session_display.show_todos(session)
            if result.prompt_text and not self.prompt.text:
                from agent_repl.core.loop.big_prompt import original_prompt

                self.prompt.restore(original_prompt(result.prompt_text))
        if session is not None:  # /model and /effort change what the status line names
            self.status.model = model_label(session.model, session.effort)
            self.status.refresh_line()
        if session is not None and not self.turn_running:
            # /snip, /compact, /uncompact and /model change the view's size.
            self.session_display.refresh_context_figure(session)
        self.refresh_user_status()
        await self.conversation.add_output(command, render_result(result, now=now))

    def _pick(self, command: str, argument: str | None) -> None:
        if argument:
            self.pending.append(f"{command} {argument}")
            self._next_pending()
        self.prompt.focus()

    # -- permissions -----------------------------------------------------------------------------

    async def ask_permission(self, request: PermissionRequest) -> Answer:
        """The session's approval callback (see `PermissionAsker`)."""
        self.post_message(self.PermissionAsked(request))
        answer = await self.permission_asker.ask(request)
        self.prompt.focus()
        return answer

    # -- keys --------------------------------------------------------------------------------------

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            self._keys_to_the_input(event)
        await super().on_event(event)

    def _keys_to_the_input(self, key: events.Key) -> None:
        """Typing while the conversation has the focus goes to the input, as if it had never left.

        The focus moves before the key is delivered, so the keys behind it (Enter too) follow.
        """
        typing = key.is_printable or key.key in ("enter", "backspace")
        if not typing or self.screen is not self.screen_stack[0] or self.holder is None:
            return
        if isinstance(self.focused, PromptInput):
            return
        bound = self.active_bindings.get(key.key)
        if bound is not None and bound.enabled:
            return  # a key the focused block uses (o opens a saved output)
        self.screen.set_focus(self.prompt)

    def action_interrupt(self) -> None:
        """Esc: stop the running turn, and bring the focus back to the input."""
        if self.turn_running and self.session is not None:
            self.session.interrupt()
            self.working.label = "Interrupting"
            self.working.refresh_line()
            self.prompt.focus()
            return
        self.set_hint("")
        self.prompt.focus()
        if self.prompt.text.strip() or self.holder is None:
            self._escape.reset()
            return
        if self._escape.press():
            self.pending.append("/rewind")
            self._next_pending()
            return
        self.set_hint("press Esc again to rewind to an earlier prompt")

    def action_background(self) -> None:
        """Ctrl+B: the running Bash command goes on in the background and the turn continues."""
        session = self.session
        if session is not None and session.shells.request_move():
            self.set_hint("moving the command to the background (/bashes lists it)")
        else:
            self.set_hint("Ctrl+B moves a running Bash command to the background; none is running")

    async def action_ctrl_c(self) -> None:
        """As in Claude Code: interrupt a running turn, else clear the input, else twice to exit."""
        if self.turn_running:
            self._ctrl_c.reset()
            if not self.permission_asker.interrupt():  # a question open: no, and the turn stops
                self.action_interrupt()
            return
        if self._ctrl_c.press():
            await self.action_quit()
            return
        if self.prompt.text:
            self.prompt.load_text("")
        self.set_hint("press Ctrl+C again to exit")
        self.set_timer(SECOND_PRESS_WINDOW, lambda: self.set_hint(""))

    async def action_quit(self) -> None:
        await self.shutdown()
        self.exit(0)

    def on_tool_block_open_output(self, message: ToolBlock.OpenOutput) -> None:
        from agent_repl.ui.screens.viewer import OutputViewer

        self.push_screen(OutputViewer(message.path))

    async def shutdown(self) -> None:
        """Stop a running turn (the history stays valid), close the session and the launcher."""
        if self._shut_down:
            return
        self._shut_down = True
        self.permission_asker.cancel()
        session = self.session
        if session is not None and self.turn_running:
            session.interrupt()
            for worker in self.workers:
                if worker.group == "turn":
                    try:
                        await asyncio.wait_for(worker.wait(), timeout=5)
                    except Exception:
                        worker.cancel()
        if session is not None:
            from agent_repl.bootstrap import close_session
            from agent_repl.ui.session_info import resume_hint

            await close_session(session, "prompt_input_exit")
            self.exit_note = resume_hint(session)
        self.launcher.close()

    async def on_unmount(self) -> None:
        self.gc_policy.started()  # quit before the first history was shown
        await self.shutdown()
