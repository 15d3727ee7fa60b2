"""The composition root: settings, client, tools, pipeline and transcript become a `Session`.

The CLI, the UIs and the tests build sessions here, so there is one place where the parts meet.
Resuming rebuilds the history from the transcript records alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from agent_repl.agents.definitions import definitions_from_json, held_back_definitions, load_catalog
from agent_repl.agents.runner import SubagentRunner, task_tool
from agent_repl.context.boundary import slice_after_compact_boundary
from agent_repl.context.pipeline import attach, context_pipeline
from agent_repl.context.projector import Pipeline
from agent_repl.context.resume import rebuild_state
from agent_repl.context.session_memory import MEMORY_FILE_NAME, SessionMemory, extraction_thresholds
from agent_repl.context.state import PipelineConfig
from agent_repl.context.thresholds import autocompact_threshold
from agent_repl.core.api.client import ModelClient
from agent_repl.core.api.deferred_tools import boundary_loaded_tools, should_defer
from agent_repl.core.api.model_catalog import ModelCatalog
from agent_repl.core.api.models import ModelLookupError, model_info, resolve_model_sync
from agent_repl.core.api.request import tool_definitions
from agent_repl.core.api.system_prompt import build_system_prompt
from agent_repl.core.config.front_matter import claude_home, project_markdown
from agent_repl.core.config.hooks import held_back_hooks
from agent_repl.core.config.settings import Settings, trust_project
from agent_repl.core.config.trust import allow_grants, change_grants, setting_grants
from agent_repl.core.model.messages import Message, SystemMessage, utc_now
from agent_repl.core.model.todos import TODOS_STATE_KEY, latest_todos
from agent_repl.core.model.tokens import cl100k_tokens
from agent_repl.core.model.transcript_sink import SessionWriteError
from agent_repl.core.permissions import safe_git
from agent_repl.core.permissions.mode import PermissionMode
from agent_repl.core.permissions.rules import ApprovalCallback
from agent_repl.core.tooling.redaction import SecretRedactor
from agent_repl.core.tooling.tool import Tool
from agent_repl.mcp.config import configured_servers, held_back_servers, project_servers_trusted
from agent_repl.session import Session
from agent_repl.tools import builtin_tools
from agent_repl.tools.skill import Skill, SkillCatalog, held_back_skills, load_skills
from agent_repl.transcript.file_history import FileHistory, file_history_dir
from agent_repl.transcript.fork_files import (
    copy_session_files,
    point_to_copies,
    preview_rewriter,
    record_pointing_to_copies,
)
from agent_repl.transcript.loader import EarlierHistory, LoadedSession, load_earlier, load_session
from agent_repl.transcript.lock import SessionLock, holder_pid
from agent_repl.transcript.paths import SessionPaths, project_dir
from agent_repl.transcript.records import SideRecord
from agent_repl.transcript.sessions import SessionLookupError, list_sessions, session_by_id
from agent_repl.transcript.sidechain import copy_subagents
from agent_repl.transcript.writer import TranscriptWriter

if TYPE_CHECKING:
    from agent_repl.mcp.connection import McpConnection
    from agent_repl.mcp.manager import McpManager


class ResumeError(Exception):
    """The session to resume cannot be found or read."""


@dataclass
class ResumeSource:
    loaded: LoadedSession
    path: Path
    # A file of our own is appended to; anything else (a Claude Code file) is forked into a new session.
    owned: bool


def git_branch(cwd: Path) -> str:
    """The branch the transcript's records name ("" outside a repository)."""
    return safe_git.git_branch(cwd) or ""


def held_back_grants(settings: Settings, cwd: Path) -> list[str]:
    """What the folder's own settings would grant or change once trusted: the trust question lists
    it (first, what changed since the folder was last trusted), print mode names it in one warning."""
    grants = [
        *allow_grants(settings.untrusted_allow),
        *setting_grants(settings.held_back, settings.unknown_held_back),
        *held_back_servers(settings, cwd),
        *held_back_definitions(cwd, project_trusted=project_servers_trusted(settings)),
        *held_back_skills(cwd, project_trusted=project_servers_trusted(settings)),
        *([] if project_servers_trusted(settings) else [f"command {p}" for p in project_markdown(cwd, "commands")]),
        *held_back_hooks(settings),
    ]
    return [*change_grants(settings.trust_changes), *grants] if grants else []


def trust_folder(settings: Settings, cwd: Path) -> tuple[Settings, list[str]]:
    """The user said yes: the folder's own settings apply from now on (and it is remembered).

    Returns the new settings and what to tell the user: the trust could not be remembered, or the
    model the folder names is unknown here (the session keeps the one it had)."""
    trusted, problem = trust_project(settings, cwd)
    notices = [f"{problem} (trusted for this run only)"] if problem else []
    if trusted.model != settings.model:
        try:
            model = resolve_model_sync(trusted.api_key, trusted.base_url, trusted.model, trusted.auth_token)
        except ModelLookupError as exc:
            notices.append(f"{exc} This session keeps {settings.model}.")
            model = settings.model
        trusted = trusted.model_copy(update={"model": model})
    return trusted, notices


def find_resume_source(settings: Settings, cwd: Path, target: str | None, *, latest: bool) -> ResumeSource | None:
    """`--resume ID|PATH` or `--continue` (latest of this project); None when there is nothing to resume."""
    projects = project_dir(settings.home, cwd)
    if latest:
        sessions = list_sessions(projects)
        if not sessions:
            return None
        path = sessions[0].path
    elif target is None:
        return None
    else:
        candidate = Path(target).expanduser()
        if candidate.suffix == ".jsonl" or candidate.exists():
            path = candidate
            if not path.is_file():
                raise ResumeError(f"no session {target!r}: {path} does not exist")
        else:
            try:
                path = session_by_id(projects, target)
            except SessionLookupError as exc:
                raise ResumeError(str(exc)) from exc
    ours = path.resolve().parent == projects.resolve()
    try:
        # Our own file continues: only the part the model sees is built. Any other is forked whole.
        loaded = load_session(path, from_compaction=ours)
        owned = ours and bool(loaded.session_id) and path.stem == loaded.session_id
        if loaded.earlier is not None and not owned:
            loaded = load_session(path)
    except OSError as exc:
        raise ResumeError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return ResumeSource(loaded, path, owned)


async def open_session(
    settings: Settings,
    cwd: Path,
    *,
    resume: ResumeSource | None = None,
    ask: ApprovalCallback | None = None,
    clock: Callable[[], datetime] = utc_now,
    tools: list[Tool] | None = None,
    mcp_extra: Callable[[Path], list[McpConnection]] | None = None,
    bounds_first: bool = False,
) -> Session:
    """`tools` replaces the built-in tools (the replay benchmark passes tools that return recorded output).
    `mcp_extra`: MCP servers a front end reaches its own way (given the folder for their logs).
    `bounds_first`: projections try upper bounds of the token counts first (`Pipeline.bounds_first`),
    for a front end that shows no estimate."""
    cwd = cwd.resolve()
    history: list[Message] = []
    owned, lock, notices = _claim(settings.home, cwd, resume)
    session_id = resume.loaded.session_id if owned and resume is not None else (settings.session_id or str(uuid.uuid4()))
    paths = SessionPaths(home=settings.home, cwd=cwd, session_id=session_id)
    if lock is None:
        lock = _lock_or_fail(paths)
    redactor = SecretRedactor.for_settings(settings)
    if resume is not None:
        # A transcript written elsewhere (or by another version) may hold credentials: not in our view.
        # Our writer redacted its own entries when it wrote them; a fork redacts everything once.
        history = redacted_history(resume.loaded, redactor, owned=owned)
    writer = TranscriptWriter(
        paths,
        git_branch=git_branch(cwd),
        last_uuid=history[-1].uuid if history and owned else None,
        redactor=redactor,
        lock=lock,
    )
    if resume is not None and not owned and resume.loaded.earlier is not None:
        # A fork copies the whole history: the part before the cut too.
        resume.loaded = _whole(resume.loaded)
        history = redacted_history(resume.loaded, redactor, owned=False)
    if resume is not None and not owned:
        # Fork: copy the history (and our own records) into a file of our own, so it is ours from here on,
        # with the folder's outputs and compaction records, which the history's previews name.
        copied = await asyncio.to_thread(copy_session_files, resume.path, writer.path, redactor.text)
        rewrite = preview_rewriter(resume.path, writer.path, copied)
        point_to_copies(history, rewrite)
        await writer.append_history(history)
        resume.loaded.side_records = [record_pointing_to_copies(r, rewrite) for r in resume.loaded.side_records]
        for record in resume.loaded.side_records:
            if isinstance(record, SideRecord):
                await writer.append_record(record)
        await asyncio.to_thread(copy_subagents, resume.path, writer.path, history, redactor.text)
        history = [m.model_copy(update={"session_id": session_id}) for m in history]
    tools = builtin_tools() if tools is None else sorted(tools, key=lambda tool: tool.name)
    # What the endpoint said of its models in an earlier session (read from disk, never the network).
    catalog = ModelCatalog.on_disk(settings.home, settings.base_url)
    window = settings.context_window or catalog.info(settings.model).context_window
    log_dir = paths.session_dir / "mcp-logs"
    mcp = await start_mcp(settings, cwd, log_dir, mcp_extra(log_dir) if mcp_extra else [])
    tools, deferred = with_mcp_tools(settings, tools, mcp, window)
    agents = load_catalog(
        settings.home, cwd, project_trusted=project_servers_trusted(settings),
        extra=definitions_from_json(settings.flag_agents) if settings.flag_agents else None,
    )  # fmt: skip
    tools = sorted([*tools, task_tool(agents, settings, tools)], key=lambda tool: tool.name)
    skills = load_skills(settings.home, claude_home(os.environ), cwd, project_trusted=project_servers_trusted(settings))
    if skills.skills:
        tools = sorted([*tools, Skill(skills)], key=lambda tool: tool.name)
    pipeline = build_pipeline(settings, cwd, tools, paths.tool_results_dir, deferred, window)
    pipeline.state.clock = clock
    pipeline.bounds_first = bounds_first
    if resume is not None:
        earlier = resume.loaded.earlier if owned else None
        rebuild_state(pipeline.state, history, resume.loaded.side_records, earlier_replies=earlier.replies if earlier else 0)
    client = ModelClient(
        api_key=settings.api_key,
        auth_token=settings.auth_token,
        base_url=settings.base_url,
        max_retries=settings.max_retries,
        read_timeout=settings.stream_idle_timeout,
    )
    session = Session(
        session_id=session_id,
        cwd=cwd,
        settings=settings,
        client=client,
        tools=tools,
        projector=pipeline,
        sink=writer,
        tool_results_dir=paths.tool_results_dir,
        history=history,
        ask=ask,
        clock=clock,
        deferred_tools=deferred,
        model_catalog=catalog,
    )
    session.mcp = mcp
    if resume is not None and owned and resume.loaded.earlier is not None:
        session.earlier = EarlierEntries(resume.loaded.earlier, redactor)
    branch = writer.envelope.git_branch

    def child_pipeline(child_settings: Settings, child_tools: list[Tool]) -> Pipeline:
        child_window = child_settings.context_window or catalog.info(child_settings.model).context_window
        return build_pipeline(child_settings, cwd, child_tools, paths.tool_results_dir, window=child_window)

    SubagentRunner(session, agents, child_pipeline, paths, git_branch=branch).install()
    session.pending_notices.extend(agents.problems)
    _offer_skills(session, skills)
    if catalog.problem:
        session.pending_notices.append(catalog.problem)
    if resume is not None:
        session.loaded_tools = boundary_loaded_tools(slice_after_compact_boundary(history, pipeline.state.compaction.undone))
    attach(session, pipeline)
    session.file_history = FileHistory(file_history_dir(settings.home, session_id), cwd, session.append_record, clock)
    if resume is not None and resume.owned:
        session.file_history.load(resume.loaded.side_records)
    session.mode.set(PermissionMode(settings.permission_mode))
    # The todo list goes on where the resumed conversation left it.
    before = session.earlier.todo_entries if session.earlier is not None else []
    session.tool_state[TODOS_STATE_KEY] = [todo.model_dump() for todo in latest_todos([*before, *history])]
    first, every = extraction_thresholds(autocompact_threshold(pipeline.state.config.effective_window))
    memory = SessionMemory(paths.session_dir / MEMORY_FILE_NAME, first_after_tokens=first, every_tokens=every)
    if resume is not None:
        memory.restore(resume.loaded.side_records)
    session.memory = memory
    for notice in notices:
        session.notices.append(notice)
        await session.append(SystemMessage(subtype="informational", content=notice, level="warning"))
    if pipeline.state.config.strategy == "autocompact":
        # The notes serve session-memory compaction; collapse never summarizes with them.
        session.after_turn_hooks.append(memory.maybe_start)
    return session


def redacted_history(loaded: LoadedSession, redactor: SecretRedactor, *, owned: bool) -> list[Message]:
    """The loaded entries without credentials: in our own file, only those another writer wrote."""
    if not owned:
        return [redactor.message(m) for m in loaded.messages]
    return [redactor.message(m) if m.uuid in loaded.foreign else m for m in loaded.messages]


class EarlierEntries:
    """The history before what a resume built, loaded from the transcript when something needs it."""

    def __init__(self, earlier: EarlierHistory, redactor: SecretRedactor) -> None:
        self.earlier = earlier
        self.redactor = redactor
        self.todo_entries = earlier.todo_entries()

    @property
    def count(self) -> int:
        return self.earlier.entries

    def load(self) -> list[Message]:
        loaded = load_earlier(self.earlier)
        return redacted_history(loaded, self.redactor, owned=True)

    def stream(self) -> Iterator[Message]:
        """The entries one at a time, without credentials (only those another writer wrote are redacted)."""
        for message, ours in self.earlier.stream():
            yield message if ours else self.redactor.message(message)


def _whole(loaded: LoadedSession) -> LoadedSession:
    return load_session(loaded.path)


def _offer_skills(session: Session, skills: SkillCatalog) -> None:
    """Each skill's folder may be read without asking (its instructions name files there), and
    what was wrong with a skill file is said once."""
    session.pending_notices.extend(skills.problems)
    for skill in skills.sorted():
        session.permissions.add_allow(f"Read(/{skill.folder.as_posix()}/**)")


async def start_mcp(settings: Settings, cwd: Path, log_dir: Path, extra: list[McpConnection]) -> McpManager | None:
    """The MCP servers' manager, or None when no server is configured and nothing is to be said
    about one (the MCP client is then not even imported)."""
    specs, problems = configured_servers(settings, cwd)
    if not specs and not problems and not extra:
        return None
    from agent_repl.mcp.manager import McpManager

    return await McpManager.start(settings, cwd, log_dir, specs=specs, problems=problems, extra=extra)


def with_mcp_tools(
    settings: Settings, tools: list[Tool], mcp: McpManager | None, window: int | None = None
) -> tuple[list[Tool], frozenset[str]]:
    """The session's tools with the MCP servers' added, and those sent deferred (with ToolSearch
    to load them) when their definitions pass their share of the context window."""
    if mcp is None or not mcp.tools:
        return tools, frozenset()
    window = window or settings.context_window or model_info(settings.model).context_window
    mcp_tokens = cl100k_tokens(json.dumps([tool.api_schema() for tool in mcp.tools]))
    extra: list[Tool] = list(mcp.tools)
    deferred: frozenset[str] = frozenset()
    if should_defer(settings.tool_search, mcp_tokens, window, settings.tool_search_share):
        from agent_repl.tools.tool_search import ToolSearch  # only MCP tools are ever deferred

        deferred = frozenset(tool.name for tool in mcp.tools)
        extra.append(ToolSearch(list(mcp.tools)))
    mcp.deferred = deferred
    return sorted([*tools, *extra], key=lambda tool: tool.name), deferred


def build_pipeline(
    settings: Settings,
    cwd: Path,
    tools: list[Tool],
    tool_results_dir: Path,
    deferred: frozenset[str] = frozenset(),
    window: int | None = None,
) -> Pipeline:
    """The session's pipeline (agent_repl.context.pipeline), configured from the settings;
    `window` is the model's as known at start (the table's when not given)."""
    window = window or settings.context_window or model_info(settings.model).context_window
    loaded = [d for d in tool_definitions(tools, deferred, web=settings.web_tools) if not d.get("defer_loading")]
    fixed = (build_system_prompt(cwd, settings.system_prompt, settings.append_system_prompt), json.dumps(loaded))
    config = PipelineConfig(
        unlimited_tools=frozenset(t.name for t in tools if t.max_result_size_chars is None),
        clearable_tools=frozenset(t.name for t in tools if t.microcompact_clearable),
        fixed_prompt=fixed,
        strategy=settings.context_strategy,
        # The one place that decides whether autocompact may run (the breaker may turn it off later).
        autocompact_on=settings.autocompact and settings.context_strategy == "autocompact",
        deferred_tools=deferred,
        clear_at_expiry=settings.clear_at_cache_expiry,
        clear_on_resume=settings.clear_on_resume,
        kept_tail_tokens=settings.compact_kept_tail_tokens,
        reinject_share=settings.compact_reinject_share,
        list_touched_files=settings.compact_file_list,
        cost_trigger_min_window=settings.compact_cost_trigger_min_window,
        cost_trigger_margin=settings.compact_cost_trigger_margin,
    )
    config.set_window(window)
    return context_pipeline(config, tool_results_dir)


def _claim(home: Path, cwd: Path, resume: ResumeSource | None) -> tuple[bool, SessionLock | None, list[str]]:
    """Whether we continue the resumed session's own file (holding its lock), or fork it."""
    if resume is None or not resume.owned:
        return False, None, []
    paths = SessionPaths(home=home, cwd=cwd, session_id=resume.loaded.session_id)
    lock = _lock_or_fail(paths)
    if lock is not None:
        return True, lock, []
    pid = holder_pid(paths)
    who = f"another agent-repl (pid {pid})" if pid else "another agent-repl"
    notice = (
        f"session {paths.session_id} is open in {who}; this continues in a new session forked from it, "
        "so neither writes over the other"
    )
    return False, None, [notice]


def _lock_or_fail(paths: SessionPaths) -> SessionLock | None:
    try:
        return SessionLock.acquire(paths)
    except OSError as exc:
        raise SessionWriteError(f"cannot save the session in {paths.project_dir}: {exc.strerror or exc}") from exc


# How long closing waits for a models-API answer still on its way.
MODEL_REFRESH_GRACE_SECONDS = 3.0


async def close_session(session: Session, reason: str = "other") -> None:
    """`reason` is SessionEnd's: "clear", "prompt_input_exit" (the user left) or "other"."""
    from agent_repl.core.loop.hooks import session_end

    try:
        await session_end(session, reason)
    except SessionWriteError:
        pass  # the transcript cannot take the failure line; closing goes on
    await session.shells.close()
    if session.memory is not None:
        await session.memory.aclose()
    if session.mcp is not None:
        await session.mcp.aclose()
    close = getattr(session.sink, "close", None)
    if close is not None:
        await close()
    if session.model_refresh is not None:
        # A refresh of the models' facts still under way gets a moment to land (a short run would
        # otherwise never renew a stale answer); past that it is asked for again next time.
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(session.model_refresh, MODEL_REFRESH_GRACE_SECONDS)
    await session.client.close()
