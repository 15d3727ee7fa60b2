"""The built-in slash commands (docs/architecture.md 2). Each returns data; the front ends draw it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent_repl.commands.add_dir import add_dir_command
from agent_repl.commands.agents import agents_command
from agent_repl.commands.background import bashes_command
from agent_repl.commands.config import config_command
from agent_repl.commands.custom import custom_command_table
from agent_repl.commands.doctor import doctor_command
from agent_repl.commands.effort import effort_command
from agent_repl.commands.export import export_command
from agent_repl.commands.hooks import hooks_command
from agent_repl.commands.mcp import mcp_command
from agent_repl.commands.project import init_command, memory_command, permissions_command, status_command
from agent_repl.commands.registry import Command, CommandContext, CommandRegistry
from agent_repl.commands.remember import remember_command
from agent_repl.commands.results import (
    CommandInfo,
    CommandResult,
    CompactDone,
    ContextView,
    CostReport,
    ExitRequest,
    HelpReport,
    ModelReport,
    ResumeChoices,
    RewindChoices,
    RewindDone,
    RewindOptions,
    SessionSwitched,
    SnipChoices,
    SnipDone,
    TextOutput,
)
from agent_repl.commands.sandbox import sandbox_command
from agent_repl.commands.skills import skills_command
from agent_repl.transcript.sessions import message_count

if TYPE_CHECKING:
    from agent_repl.context.rewind import RestoreWhat

KEYS = [
    ("Enter", "send the message"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("Up / Down", "earlier prompts of this project"),
    ("Tab", "complete a command or a file path (in an empty input: move to the conversation)"),
    ("Tab / Shift+Tab", "in the conversation: move between tool blocks and dividers; Enter opens one, o opens a saved output"),
    ("PageUp / PageDown", "scroll the conversation"),
    ("Esc", "interrupt the running turn; bring the focus back to the input"),
    ("Esc Esc", "on an empty input: rewind to before an earlier prompt"),
    ("Shift+Tab", "in the input: cycle the permission mode (default, accept edits, plan)"),
    ("Ctrl+C", "interrupt the running turn; on an idle prompt clear it, twice to exit"),
    ("Ctrl+D", "exit (the line that resumes the session is printed)"),
    ("Ctrl+B", "while Bash runs a command: move it to the background (/bashes lists it)"),
    ("@path, !command", "attach a file or a directory listing; run a shell command yourself"),
]


async def help_command(ctx: CommandContext, args: str) -> CommandResult:
    commands = [*ctx.registry.commands.values(), *ctx.registry.custom_commands(ctx.session)]
    infos = [CommandInfo(f"/{c.name}", c.usage, c.summary) for c in commands]
    return HelpReport(infos, KEYS)


async def exit_command(ctx: CommandContext, args: str) -> CommandResult:
    return ExitRequest()


async def clear_command(ctx: CommandContext, args: str) -> CommandResult:
    previous = ctx.session
    path = _transcript_path(previous)
    session = await ctx.holder.switch(None)
    return SessionSwitched(
        session.session_id, previous.session_id, path, message_count(session.messages), resumed=False
    )


def _transcript_path(session) -> str:
    """The session's transcript when it has one on disk (a session that never got a message has none)."""
    path = session.sink.path
    return str(path) if path is not None and Path(path).is_file() else ""


async def cost_command(ctx: CommandContext, args: str) -> CommandResult:
    session = ctx.session
    return CostReport(session.model, session.usage_total, session.cost_total_usd, session.request_count)


async def model_command(ctx: CommandContext, args: str) -> CommandResult:
    from agent_repl.core.api.models import ModelLookupError, resolve_model

    session = ctx.session
    name = args.strip()
    if not name:
        return ModelReport(session.model, None, session.settings.context_window or session.model_info.context_window, [])
    if any(ch.isspace() for ch in name):
        return TextOutput(f"a model name has no spaces: {name!r}", level="error")
    try:
        model = await resolve_model(session.client, name)
    except ModelLookupError as exc:
        return TextOutput(str(exc), level="error")
    data = await session.client.model_data(model)
    if data is not None:
        session.model_catalog.remember({model: data}, session.clock())
    previous = session.model
    session.model = model  # the pipeline follows: window, thinking, compaction
    return ModelReport(model, previous, session.settings.context_window or session.model_info.context_window, [])


async def resume_command(ctx: CommandContext, args: str) -> CommandResult:
    from agent_repl.bootstrap import ResumeError, find_resume_source
    from agent_repl.transcript.paths import project_dir
    from agent_repl.transcript.sessions import list_sessions

    session = ctx.session
    target = args.strip()
    if not target:
        sessions = list_sessions(project_dir(session.settings.home, session.cwd))
        return ResumeChoices([s for s in sessions if s.message_count > 0], session.session_id)
    if target == session.session_id:
        return TextOutput("that is the session you are in", level="warning")
    try:
        source = find_resume_source(session.settings, session.cwd, target, latest=False)
    except ResumeError as exc:
        return TextOutput(str(exc), level="error")
    if source is None:
        return TextOutput(f"no session {target!r}", level="error")
    if source.owned and source.loaded.session_id == session.session_id:
        return TextOutput("that is the session you are in", level="warning")
    previous = session
    path = _transcript_path(previous)
    new = await ctx.holder.switch(source)
    return SessionSwitched(
        new.session_id,
        previous.session_id,
        path,
        message_count(new.messages),
        resumed=True,
        warnings=list(source.loaded.warnings),
    )


async def context_command(ctx: CommandContext, args: str) -> CommandResult:
    from agent_repl.context.report import build_context_report

    return ContextView(build_context_report(ctx.session))


def parse_snip_range(args: str) -> tuple[str, str | None] | None:
    """`ID` or `ID..ID` (ids with or without `[id:` `]`, or uuids); None when malformed."""
    text = args.strip()
    if not text:
        return None
    start, dots, end = text.partition("..")
    start, end = start.strip(), end.strip()
    if not start or (dots and not end) or " " in start or " " in end:
        return None
    return start, (end or None)


async def snip_command(ctx: CommandContext, args: str) -> CommandResult:
    from agent_repl.context.snip import snip_messages, snippable_messages

    session, pipeline = ctx.session, ctx.pipeline
    if pipeline is None:
        return TextOutput("/snip needs the context pipeline", level="error")
    if not args.strip():
        return SnipChoices(snippable_messages(session, pipeline))
    parsed = parse_snip_range(args)
    if parsed is None:
        return TextOutput(
            "usage: /snip ID or /snip ID..ID (the [id:...] tags shown on messages)", level="error"
        )
    result = await snip_messages(session, pipeline, parsed[0], parsed[1], source="user")
    if result.is_error:
        return TextOutput(result.user_text, level="error")
    return SnipDone(result, result.user_text + " (still in your history, marked; gone from the model's view)")


async def compact_command(ctx: CommandContext, args: str) -> CommandResult:
    """Summarize the conversation now (the same path as autocompact, with the user's focus)."""
    from agent_repl.core.loop.compact import compact_now
    from agent_repl.core.model.events import CompactionFinished, ErrorEvent

    session = ctx.session
    if session.compactor is None:
        return TextOutput("this session has no context pipeline to compact", level="error")
    before, after, error = 0, 0, ""
    compaction = compact_now(session, "manual", args.strip() or None)
    async for event in compaction:
        if isinstance(event, CompactionFinished):
            before, after = event.tokens_before, event.tokens_after
        elif isinstance(event, ErrorEvent):
            error = event.message
    if not compaction.result:
        return TextOutput(f"not compacted: {error or 'the compaction did not finish'}", level="error")
    return CompactDone(before, after)


async def uncompact_command(ctx: CommandContext, args: str) -> CommandResult:
    from agent_repl.context.compact import undo_last_compaction

    if ctx.pipeline is None:
        return TextOutput("/uncompact needs the context pipeline", level="error")
    ok, text = await undo_last_compaction(ctx.session, ctx.pipeline)
    return TextOutput(text, level="info" if ok else "warning")


REWIND_WHAT: dict[str, RestoreWhat] = {"both": "both", "code": "code", "conversation": "conversation", "conv": "conversation", "chat": "conversation"}


async def rewind_command(ctx: CommandContext, args: str) -> CommandResult:
    """`/rewind` lists prompts; `/rewind ID` asks what to restore; `/rewind ID both|conversation|code` does it."""
    from agent_repl.context.rewind import rewind, rewind_targets

    session, pipeline = ctx.session, ctx.pipeline
    if pipeline is None:
        return TextOutput("/rewind needs the context pipeline", level="error")
    targets = rewind_targets(session, pipeline)
    words = args.split()
    if not words:
        return RewindChoices(targets)
    ref = words[0]
    target = next((t for t in targets if t.uuid == ref), None) or next(
        (t for t in targets if t.uuid.startswith(ref)), None
    )
    if ref.isdigit() and target is None and 1 <= int(ref) <= len(targets):
        target = targets[int(ref) - 1]
    if target is None:
        return TextOutput(f"no prompt {ref!r} to rewind to; /rewind lists them", level="error")
    if len(words) == 1:
        return RewindOptions(target)
    what = REWIND_WHAT.get(words[1].lower())
    if what is None or len(words) > 2:
        return TextOutput("usage: /rewind [ID [both | conversation | code]]", level="error")
    outcome = await rewind(session, pipeline, target.uuid, what)
    return RewindDone(outcome.text, outcome.prompt_text if what != "code" else "", "info" if outcome.ok else "error")


def default_registry() -> CommandRegistry:
    """The built-in commands, in the order /help lists them."""
    registry = CommandRegistry(custom_source=custom_command_table)
    for command in (
        Command("help", "list commands and keys", help_command, aliases=("?",)),
        Command("context", "where the context tokens go (no model call)", context_command),
        Command("snip", "remove messages from the model's view", snip_command, usage="[ID | ID..ID]"),
        Command("compact", "summarize the conversation so far", compact_command, usage="[instructions]"),
        Command("uncompact", "undo the last compaction", uncompact_command),
        Command(
            "rewind",
            "go back to before a prompt: the code, the conversation or both (also Esc Esc)",
            rewind_command,
            usage="[ID [both|conversation|code]]",
            aliases=("checkpoint",),
        ),
        Command(
            "resume",
            "continue another session of this project",
            resume_command,
            usage="[ID | PATH]",
            completes="path",
        ),
        Command("clear", "start a new session (this one stays resumable)", clear_command, aliases=("new",)),
        Command("model", "show or change the model", model_command, usage="[name]"),
        Command(
            "effort",
            "show or choose how hard the model works",
            effort_command,
            usage="[low|medium|high|xhigh|max|auto]",
        ),
        Command("mcp", "MCP servers, their status and tools", mcp_command),
        Command("agents", "the sub-agent types Task can start", agents_command),
        Command("skills", "the skills the model can load (Skill tool)", skills_command),
        Command("hooks", "the configured hooks and their last result", hooks_command),
        Command("cost", "tokens and cost of this session", cost_command),
        Command("config", "show the settings and change one in place", config_command, usage="[KEY [VALUE | --unset] [--project]]"),
        Command("doctor", "check the installation: Python, ripgrep, tree-sitter, sandbox, endpoint, key, settings", doctor_command),
        Command("status", "version, model, endpoint, session, settings and memory files", status_command),
        Command("sandbox", "the OS sandbox for commands: status, modes, allowed ports", sandbox_command, usage="[on|off|auto|ask|allow-port N|deny-port N]"),
        Command(
            "permissions",
            "list the permission rules; add or remove one",
            permissions_command,
            usage="[allow RULE | deny RULE | remove RULE]",
            aliases=("allowed-tools",),
        ),
        Command("memory", "edit the project's memory file (AGENTS.md) in $EDITOR", memory_command),
        Command(
            "remember",
            "add a line to the project's or your own memory file (or start a prompt with #)",
            remember_command,
            usage="[--project|--user] NOTE",
        ),
        Command("init", "have the model write an AGENTS.md for this project", init_command, usage="[notes]"),
        Command("bashes", "the background commands: status, exit code, command; kill one", bashes_command, usage="[kill ID]"),
        Command("add-dir", "add a working directory for this session", add_dir_command, usage="PATH", completes="path"),
        Command("export", "the conversation as Markdown: to FILE, else to the clipboard", export_command, usage="[FILE]", completes="path"),
        Command("exit", "leave", exit_command, aliases=("quit",)),
    ):
        registry.register(command)
    return registry
