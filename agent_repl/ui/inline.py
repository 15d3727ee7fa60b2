"""The inline line-mode REPL: a prompt_toolkit prompt, rich output into the terminal's scrollback.

For terminals (or people) that do not want a full-screen app. It consumes the same event stream
and the same command registry as the full-screen app. Ctrl-C during a turn interrupts it; Ctrl-D
at the prompt exits.
"""

from __future__ import annotations

import asyncio
import re
import signal
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application.current import get_app_session
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import History
from prompt_toolkit.input.typeahead import store_typeahead
from prompt_toolkit.key_binding import KeyBindings, KeyPress, KeyPressEvent, merge_key_bindings
from prompt_toolkit.keys import Keys
from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.text import Text

from agent_repl.bootstrap import ResumeSource, close_session, held_back_grants, open_session, trust_folder
from agent_repl.commands import CommandContext, SessionHolder, default_registry
from agent_repl.commands import results as r
from agent_repl.commands.export import write_export
from agent_repl.commands.submit import CommandLine, MemoryNoteLine, PromptLine, ShellLine, submit, turn_events
from agent_repl.core.config.settings import Settings
from agent_repl.core.config.trust import NOT_TRUSTED_NOTICE, trust_question
from agent_repl.core.model.events import (
    AgentEvent,
    AssistantMessageEvent,
    EntryAppended,
    ErrorEvent,
    PermissionModeChanged,
    RequestRetry,
    SubagentProgress,
    SystemMessageEvent,
    TextDelta,
    ThinkingDelta,
    ToolProgress,
    ToolResultEvent,
    ToolUseStarted,
    TurnEnded,
    TurnStarted,
)
from agent_repl.core.model.messages import SystemMessage
from agent_repl.core.model.visible import show_controls
from agent_repl.core.model.web_results import SERVER_TOOL_NAMES, web_result_summary
from agent_repl.core.permissions.mode import MODE_LABELS
from agent_repl.core.permissions.rules import Answer, PermissionRequest
from agent_repl.core.tooling.diffs import FileChange
from agent_repl.core.tooling.display import BodyKind, ToolDisplays
from agent_repl.core.tooling.redaction import SecretRedactor
from agent_repl.session import Session
from agent_repl.transcript.sessions import message_count
from agent_repl.ui import tool_render
from agent_repl.ui.command_view import (
    command_view,
)
from agent_repl.ui.completion import complete
from agent_repl.ui.editor import open_in_editor
from agent_repl.ui.inline_questions import InlineQuestions, print_view
from agent_repl.ui.pastes import PastedTexts
from agent_repl.ui.prompt_history import PromptHistory, history_path
from agent_repl.ui.render import render_result
from agent_repl.ui.session_info import resume_hint


class InlineRenderer:
    """Prints a turn's events into the scrollback; tool calls look as they do in the app (`tool_render`)."""

    def __init__(self, console: Console, displays: ToolDisplays | None = None) -> None:
        self.console = console
        # How each tool's calls are shown (the session's tools; set again when the session changes).
        self.displays = displays or ToolDisplays()
        self.streaming = False
        # The open line is the model's thinking (drawn dimmed), not its answer.
        self.thinking = False
        self.calls: dict[str, tool_render.ToolCall] = {}
        # The files whose diff the user just saw in a permission prompt (not printed twice).
        self.shown_diffs: set[str] = set()
        # The running turn's output against its budget, as the last progress event said.
        self.budget = ""

    def _end_stream(self) -> None:
        if self.streaming:
            self.console.file.write("\n")
            self.streaming = False
        self.thinking = False

    def _thinking(self, text: str) -> None:
        """The model's thinking as it streams (Sonnet 5.5's notes between tool calls), dimmed."""
        if not self.thinking:
            self._end_stream()
            self.console.print(Text("✻ ", style="dim"), end="")
            self.thinking = self.streaming = True
        self.console.print(Text(show_controls(text), style="dim italic"), end="")
        self.console.file.flush()

    def render(self, event: AgentEvent) -> None:
        if isinstance(event, TextDelta):
            if self.thinking:
                self._end_stream()
            self.console.file.write(show_controls(event.text))
            self.console.file.flush()
            self.streaming = True
        elif isinstance(event, ThinkingDelta):
            if event.text:
                self._thinking(event.text)
        elif isinstance(event, ToolProgress):
            return
        elif isinstance(event, AssistantMessageEvent):
            self._server_tool(event)
        elif isinstance(event, ToolUseStarted):
            self._end_stream()
            call = tool_render.ToolCall(event.name, dict(event.input), displays=self.displays)
            self.calls[event.tool_use_id] = call
            line = Text("● ", style="bold cyan")
            line.append(tool_render.headline(call), style="bold")
            self.console.print(line)
        elif isinstance(event, SubagentProgress):
            self._subagent_step(event)
        elif isinstance(event, ToolResultEvent):
            self._tool_result(event)
        elif isinstance(event, PermissionModeChanged):
            self.console.print(Text(f"permission mode: {event.mode}", style="dim"))
        elif isinstance(event, RequestRetry):
            self._end_stream()
            self.console.print(Text(f"retrying ({event.attempt}) after: {show_controls(event.error)}", style="yellow"))
        elif isinstance(event, ErrorEvent):
            self._end_stream()
            self.console.print(Text(show_controls(event.message), style="red"))
        elif event.kind == "system_message" and (
            event.message.level == "warning" or event.message.subtype == "stop_hook_summary"
        ):
            self._end_stream()  # a hook that failed or sent the model back, a server that died
            style = "yellow" if event.message.level == "warning" else "dim"
            self.console.print(Text(show_controls(event.message.content), style=style))
        elif event.kind == "token_budget":
            self.budget = f"output {event.used:,} / {event.budget:,} tokens"
        elif event.kind == "loop_continued" and event.transition == "token_budget_continuation":
            self._end_stream()
            self.console.print(Text(f"continuing: {self.budget}", style="dim"))
        elif isinstance(event, TurnEnded):
            self._end_stream()
            if event.reason == "interrupted":
                self.console.print(Text("interrupted", style="yellow"))

    def _server_tool(self, event: AssistantMessageEvent) -> None:
        """The API's own web tools: their calls and results come inside the reply, not as tool events."""
        for block in event.message.content:
            if block.type == "server_tool_use":
                self._end_stream()
                name = SERVER_TOOL_NAMES.get(block.name, block.name)
                call = tool_render.ToolCall(name, dict(block.input), displays=self.displays)
                self.calls[block.id] = call
                line = Text("● ", style="bold cyan")
                line.append(tool_render.headline(call), style="bold")
                self.console.print(line)
            elif block.type in ("web_search_tool_result", "web_fetch_tool_result"):
                summary, failed = web_result_summary(block.model_dump(mode="json"))
                self.calls.pop(block.tool_use_id, None)
                self.console.print(Text(f"  ⎿ {summary}", style="red" if failed else "dim"))

    def _subagent_step(self, event: SubagentProgress) -> None:
        """A sub-agent's finished tool call, one line under its Task (several may run at once)."""
        task = self.calls.get(event.tool_use_id)
        step = tool_render.add_step(task, event.message) if task is not None else None
        if task is None or step is None or step.result is None:
            return
        self._end_stream()
        line = Text(f"  ⎿ {tool_render.one_line(str(task.input.get('description') or 'sub-agent'), 30)}: ", style="dim")
        line.append_text(tool_render.header(step, width=60))
        self.console.print(line)

    def _tool_result(self, event: ToolResultEvent) -> None:
        call = self.calls.pop(event.tool_use_id, None) or tool_render.ToolCall(event.name, displays=self.displays)
        block = next((b for b in event.message.tool_results() if b.tool_use_id == event.tool_use_id), None)
        call.result = block.text() if block is not None else ""
        call.is_error = event.is_error
        call.structured = event.message.tool_use_result
        line = Text("  ⎿ ", style="dim")
        line.append(tool_render.outcome(call), style="red" if call.is_error else "dim")
        if event.persisted_path:
            line.append(f" (full output: {tool_render.one_line(event.persisted_path, 200)})", style="dim")
        self.console.print(line)
        path = str(call.input.get("file_path"))
        if call.display.body is BodyKind.DIFF and path in self.shown_diffs:
            self.shown_diffs.discard(path)  # the user saw this diff when asked
        elif tool_render.opens_expanded(call) or call.display.body is BodyKind.SUBTASK:
            self.console.print(Padding(tool_render.body(call), (0, 0, 0, 4)))


class ProjectHistory(History):
    """prompt_toolkit's history over this project's prompt file (shared with the full-screen app)."""

    def __init__(self, store: PromptHistory) -> None:
        self.store = store
        super().__init__()

    def load_history_strings(self) -> Iterable[str]:
        return list(reversed(self.store.load().entries))

    def store_string(self, string: str) -> None:
        self.store.append(string)


class InlineCompleter(Completer):
    def __init__(self, cwd: Path, commands: list[str] | Callable[[], list[str]]) -> None:
        self.cwd = cwd
        # A callable is asked each time: the session's custom commands are read as they are now.
        self.commands = commands

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        commands = self.commands() if callable(self.commands) else self.commands
        found = complete(before, self.cwd, commands)
        if found is None:
            return
        start = found.start - len(before)
        prefix = before[found.start :]
        at = "@" if prefix.startswith("@") else ""
        for candidate in found.candidates:
            yield Completion(at + candidate, start_position=start)


async def _confirm_trust(prompt: PromptSession, console: Console, cwd: Path, settings: Settings) -> Settings:
    """Ask once whether this folder's own settings may allow things; a yes is remembered."""
    held_back = held_back_grants(settings, cwd)
    if not held_back:
        return settings
    question = trust_question(cwd, held_back)
    width = max(20, console.width - 4)
    # Laid out as a command is: all of it, or its start and its end with the answers below on screen.
    view = command_view(question, width, max(3, console.height - 3), shell=False, what="question")
    console.print(Text("Trust this folder?", style="bold yellow"))
    print_view(console, view)
    more = " / [v] the whole question" if view.hidden_lines else ""
    while True:
        try:
            answer = await prompt.prompt_async(f"[y] trust this folder{more} / [n] not now > ")
        except (EOFError, KeyboardInterrupt):
            answer = ""
        if answer.strip().lower()[:1] != "v":
            break
        print_view(console, command_view(question, width, None, shell=False))
    if answer.strip().lower()[:1] != "y":
        console.print(f"[dim]{escape(NOT_TRUSTED_NOTICE)}[/]")
        return settings
    settings, problems = await asyncio.to_thread(trust_folder, settings, cwd)
    for problem in problems:
        console.print(f"[red]{escape(problem)}[/]")
    return settings


@contextmanager
def interrupt_keys(on_interrupt: Callable[[], None], on_background: Callable[[], object] | None = None) -> Iterator[None]:
    """While a turn runs: Esc or Ctrl+C interrupt it, without echoing `^[` or `^C`; Ctrl+B moves
    the running Bash command to the background (`on_background`).

    The terminal is put in raw mode and read as prompt_toolkit reads it; any other key is kept as
    type-ahead for the next prompt. A question asked meanwhile (the permission prompt) attaches
    its own reader on top and gets the keys until it is answered.
    """
    loop = asyncio.get_running_loop()
    keys = get_app_session().input
    flush_later: list[asyncio.TimerHandle] = []

    def handle(presses: list[KeyPress]) -> None:
        if any(p.key in (Keys.Escape, Keys.ControlC) for p in presses):
            on_interrupt()
        if on_background is not None and any(p.key == Keys.ControlB for p in presses):
            on_background()
        kept = [p for p in presses if p.key not in (Keys.Escape, Keys.ControlC, Keys.ControlB)]
        if kept:
            store_typeahead(keys, kept)

    def flush() -> None:
        handle(keys.flush_keys())  # a lone Esc waits in the parser for a sequence that never comes

    def readable() -> None:
        handle(keys.read_keys())
        for handle_ in flush_later:
            handle_.cancel()
        flush_later[:] = [loop.call_later(0.05, flush)]

    try:
        loop.add_signal_handler(signal.SIGINT, on_interrupt)  # when stdin is not a terminal
    except (NotImplementedError, RuntimeError):
        pass
    try:
        with keys.raw_mode(), keys.attach(readable):
            yield
    finally:
        for handle_ in flush_later:
            handle_.cancel()
        try:
            loop.remove_signal_handler(signal.SIGINT)
        except (NotImplementedError, RuntimeError):
            pass


async def _run_one_turn(session: Session, submission: ShellLine | PromptLine, renderer: InlineRenderer) -> None:
    output = ""
    with interrupt_keys(session.interrupt, session.shells.request_move):
        async for event in turn_events(session, submission):
            renderer.render(event)
            if isinstance(event, TurnStarted):
                output = ""
            elif isinstance(event, EntryAppended | SystemMessageEvent):
                # The command's output (a `<bash-stdout>` record) is the last entry after its prompt.
                entry = event.message
                output = entry.content if isinstance(entry, SystemMessage) else entry.text()
    if isinstance(submission, ShellLine):
        shell = submission.command
        shown = re.sub(r"</?bash-(stdout|stderr)>", "", output)
        renderer.console.print(Text("! ", style="bold magenta").append(tool_render.one_line(shell, 200), style="bold"))
        renderer.console.print(Padding(tool_render.terminal_output(shown.strip("\n") or "(no output)"), (0, 0, 0, 2)))


def paste_bindings(pastes: PastedTexts) -> KeyBindings:
    """A long paste goes into the line as its placeholder (expanded again when the line is sent)."""
    bindings = KeyBindings()

    @bindings.add(Keys.BracketedPaste)
    def _paste(event: KeyPressEvent) -> None:
        text = event.data.replace("\r\n", "\n").replace("\r", "\n")
        event.current_buffer.insert_text(pastes.placeholder_for(text) or text)

    return bindings


async def _choose(prompt: PromptSession, question: str) -> str:
    try:
        return (await prompt.prompt_async(question)).strip()
    except (EOFError, KeyboardInterrupt):
        return ""


async def _follow_up(result: r.CommandResult, prompt: PromptSession) -> str | None:
    """Pickers in line mode: the table was printed; ask for the choice and return the next command."""
    if isinstance(result, r.ResumeChoices) and result.sessions:
        answer = await _choose(prompt, "resume which? (number, empty to cancel) > ")
        if answer.isdigit() and 1 <= int(answer) <= len(result.sessions):
            return f"/resume {result.sessions[int(answer) - 1].path}"
    if isinstance(result, r.RewindChoices) and result.targets:
        answer = await _choose(prompt, "rewind to before which prompt? (number, empty to cancel) > ")
        if answer.isdigit() and 1 <= int(answer) <= len(result.targets):
            return f"/rewind {result.targets[int(answer) - 1].uuid}"
    if isinstance(result, r.RewindOptions):
        answer = (await _choose(prompt, "restore what? [b/c/o] > ")).lower()[:1]
        what = {"b": "both", "c": "conversation", "o": "code"}.get(answer)
        if what:
            return f"/rewind {result.target.uuid} {what}"
    if isinstance(result, r.MemoryChoices):
        answer = await _choose(prompt, "save to which memory? (number, empty to cancel) > ")
        if answer.isdigit() and 1 <= int(answer) <= len(result.targets):
            return f"/remember {result.targets[int(answer) - 1].flag} {result.note}"
    if isinstance(result, r.SnipChoices) and result.items:
        answer = await _choose(prompt, "snip which? (ID or ID..ID, empty to cancel) > ")
        if answer:
            return f"/snip {answer}"
    return None


async def run_inline(
    settings: Settings, cwd: Path, resume: ResumeSource | None, *, first_prompt: str | None
) -> int:
    console = Console(highlight=False)
    cwd = cwd.resolve()
    registry = default_registry()
    store = PromptHistory(history_path(settings.home, cwd), redactor=SecretRedactor.for_settings(settings))
    holder: SessionHolder | None = None
    bindings = KeyBindings()

    @bindings.add("s-tab")
    def _cycle_mode(event) -> None:  # noqa: ANN001 - prompt_toolkit's key event
        if holder is not None:
            holder.session.mode.cycle()
            event.app.invalidate()

    def mode_label() -> str:
        label = MODE_LABELS[holder.session.permission_mode] if holder is not None else ""
        return f"{label} (shift+tab to cycle)" if label else ""

    pastes = PastedTexts()
    questions = InlineQuestions(console, cwd)
    prompt: PromptSession[str] = PromptSession(
        history=ProjectHistory(store),
        completer=InlineCompleter(cwd, lambda: registry.complete("", holder.session if holder else None)),
        complete_while_typing=False,
        key_bindings=merge_key_bindings([bindings, paste_bindings(pastes), questions.bindings]),
        rprompt=mode_label,
    )
    questions.prompt = prompt
    renderer = InlineRenderer(console)

    async def ask(request: PermissionRequest) -> Answer:
        answer = await questions.ask(request)
        if isinstance(request.preview, FileChange):
            renderer.shown_diffs.add(request.key)
        return answer

    async def reopen(source: ResumeSource | None, previous: Session) -> Session:
        next_settings = previous.settings.model_copy(update={"model": previous.model})
        session = await open_session(next_settings, cwd, resume=source, ask=ask)
        renderer.displays = session.tool_displays
        return session

    settings = await _confirm_trust(prompt, console, cwd, settings)
    holder = SessionHolder(await open_session(settings, cwd, resume=resume, ask=ask), reopen)
    session = holder.session
    renderer.displays = session.tool_displays
    console.print(
        f"[bold]agent-repl[/] · {escape(session.model)} · session {session.session_id[:8]} · /help for help"
        " · Esc or Ctrl+C interrupts a turn, Ctrl+D exits"
    )
    if session.messages:
        earlier = f" ({session.earlier.count:,} earlier entries left in the transcript)" if session.earlier else ""
        console.print(f"[dim]resumed {message_count(session.messages)} messages{earlier}[/]")
    for notice in [*session.notices, *filter(None, [session.sandbox.notice()])]:
        console.print(f"[yellow]{escape(notice)}[/]")
    pending = first_prompt
    try:
        while True:
            if pending is None:
                try:
                    pending = await prompt.prompt_async("> ")
                except KeyboardInterrupt:
                    continue
                except EOFError:
                    break
            text, pending = pastes.expand(pending).strip(), None
            pastes.clear()
            if not text:
                continue
            submission = submit(text, registry)
            if isinstance(submission, CommandLine | MemoryNoteLine):
                line = submission.remember if isinstance(submission, MemoryNoteLine) else text
                result = await registry.run(line, CommandContext(holder, registry))
                if isinstance(result, r.ExitRequest):
                    break
                if isinstance(result, r.EditorRequest):
                    result = open_in_editor(result)
                if isinstance(result, r.ClipboardExport):  # no clipboard here: the file it names
                    result = write_export(result.markdown, result.fallback)
                console.print(render_result(result))
                if isinstance(result, r.PromptRequest):
                    pending = result.prompt
                    continue
                pending = await _follow_up(result, prompt)
                continue
            await _run_one_turn(holder.session, submission, renderer)
    finally:
        await close_session(holder.session, "prompt_input_exit")
        hint = resume_hint(holder.session)
        if hint:
            console.print(hint, markup=False)
    return 0
