"""A session: the full history, where it is written, and what a turn needs to run.

The history (`messages`) is append-only (docs/architecture.md 3); every entry is written to the
transcript as it is appended. A resumed long session holds the part since the compaction its view
starts at; the entries before it stay in the transcript until something asks for them. The model's view is built from it each turn by the projector.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent_repl.core.api.client import ModelClient, UnknownModel
from agent_repl.core.api.model_catalog import ModelCatalog
from agent_repl.core.api.models import ModelInfo, add_cost, cost_usd
from agent_repl.core.api.request import build_request, tool_definitions
from agent_repl.core.api.system_prompt import build_system_prompt, session_context
from agent_repl.core.api.thinking_prefix import prefix_seed
from agent_repl.core.config.hooks import configured_hooks, hooks_trusted
from agent_repl.core.config.settings import Settings
from agent_repl.core.config.thinking_request import SessionEffort, chosen_effort, request_fields, thinking_on
from agent_repl.core.hooks.runner import HookRunner
from agent_repl.core.loop.projection import Projector
from agent_repl.core.loop.tool_execution import ToolRuntime
from agent_repl.core.loop.turn_session import Compaction
from agent_repl.core.model.events import AgentEvent, ErrorEvent, TurnEnded
from agent_repl.core.model.messages import Message, MessageT, Usage, UserMessage, iso_timestamp, utc_now
from agent_repl.core.model.transcript_sink import SessionWriteError, TranscriptSink
from agent_repl.core.permissions.mode import ModeHolder, PermissionMode
from agent_repl.core.permissions.rules import ApprovalCallback, PermissionPolicy
from agent_repl.core.sandbox import Sandbox
from agent_repl.core.tooling.background import BackgroundShells
from agent_repl.core.tooling.display import ToolDisplays
from agent_repl.core.tooling.file_state import ReadLedger
from agent_repl.core.tooling.redaction import SecretRedactor
from agent_repl.core.tooling.tool import Tool, ToolPorts

if TYPE_CHECKING:
    from agent_repl.context.session_memory import SessionMemory
    from agent_repl.mcp.manager import McpManager


class EarlierEntries(Protocol):
    """The history before what a resume built (agent_repl.bootstrap), read from the transcript on demand."""

    @property
    def count(self) -> int: ...

    # The last TodoWrite call before the cut and the entries naming its id (its result).
    todo_entries: list[Message]

    def load(self) -> list[Message]: ...

    def stream(self) -> Iterator[Message]: ...


class Session:
    def __init__(
        self,
        *,
        session_id: str,
        cwd: Path,
        settings: Settings,
        client: ModelClient,
        tools: list[Tool],
        projector: Projector,
        sink: TranscriptSink,
        tool_results_dir: Path,
        history: list[Message] | None = None,
        ask: ApprovalCallback | None = None,
        permissions: PermissionPolicy | None = None,
        context_provider: Callable[[Path], str] | None = None,
        clock: Callable[[], datetime] = utc_now,
        deferred_tools: frozenset[str] = frozenset(),
        system_prompt: str | None = None,
        model_catalog: ModelCatalog | None = None,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.settings = settings
        self.client = client
        self.tools = {tool.name: tool for tool in tools}
        # How front ends show each tool's calls (an unknown name gets the default display).
        self.tool_displays = ToolDisplays({tool.name: tool.display for tool in tools})
        # Tools sent with `defer_loading` (agent_repl.core.api.deferred_tools), minus those a compact
        # boundary says were discovered before it (`loaded_tools`).
        self.deferred_tools = deferred_tools
        self.loaded_tools: frozenset[str] = frozenset()
        self._definitions: tuple[frozenset[str], list[dict[str, Any]]] | None = None
        self.projector = projector
        self.sink = sink
        self.tool_results_dir = tool_results_dir
        # The history, or on a resume of a long session the part since the compaction the model's
        # view starts at; `earlier` reads the rest from the transcript (`full_history`).
        self.messages: list[Message] = list(history or [])
        self.earlier: EarlierEntries | None = None
        self.system_prompt = system_prompt if system_prompt is not None else build_system_prompt(
            cwd, settings.system_prompt, settings.append_system_prompt
        )
        # What the endpoint said about its models (window, output cap, capabilities), over the table.
        self.model_catalog = model_catalog or ModelCatalog()
        # The models API asked again in the background (its cached answer was stale).
        self.model_refresh: asyncio.Task[None] | None = None
        self._model = settings.model
        self._configure_model()
        self.permissions = permissions or PermissionPolicy.from_rules(
            settings.permissions.allow,
            settings.permissions.deny,
            skip_all=settings.skip_permissions,
            roots=[cwd, *settings.add_dirs],
        )
        self.ask = ask
        # The OS sandbox Bash commands run in (agent_repl.core.sandbox); it reads this session's
        # tool results, nothing else of the agent's store.
        self.sandbox = Sandbox.for_session(
            settings.sandbox,
            project=cwd,
            added_dirs=list(settings.add_dirs),
            agent_home=settings.home,
            tool_results_dir=tool_results_dir,
        )
        # History entries and tool output are kept without credentials (see agent_repl.core.tooling.redaction).
        self.redactor = SecretRedactor.for_settings(settings)
        self.tool_state: dict[str, Any] = {}
        # The Bash commands running in the background; killed when the session closes.
        self.shells = BackgroundShells()
        self.tool_ports = ToolPorts(shells=self.shells)
        # What Edit and Write check: the files the model read or wrote, as they were then.
        self.files = ReadLedger()
        self.mode = ModeHolder()
        # The mode the model was last told about (plan mode on or off).
        self.announced_mode = PermissionMode.DEFAULT
        # Checkpoints of the files the tools change (agent_repl.transcript.file_history), if kept.
        self.file_history: Any = None
        self.usage_total = Usage()
        # The newest response's usage (None before the first), for the user's status line.
        self.last_usage: Usage | None = None
        self.usage_by_model: dict[str, Usage] = {}
        # None once a request's model has no known price (shown as unknown, never guessed).
        self.cost_total_usd: float | None = 0.0
        self.cost_by_model: dict[str, float | None] = {}
        self.request_count = 0
        # Time spent waiting on the API, summed over every request (print mode's duration_api_ms).
        self.api_duration_ms = 0.0
        # Whether turns also yield the raw stream events (print mode's --include-partial-messages).
        self.stream_events = False
        self.cancelled = asyncio.Event()
        self._context_provider = context_provider or partial(session_context, home=settings.home)
        self.capabilities_checked = False
        # Stamps every entry; the pipeline's time-based decisions use the same clock.
        self.clock = clock
        # Runs the compactions the pipeline, /compact and recovery ask for (agent_repl.context has one).
        self.compactor: Compaction[Session] | None = None
        # Called after every turn that reached the model (background work such as session memory).
        self.after_turn_hooks: list[Callable[[Session, int | None], None]] = []
        # The session's notes, when it keeps them.
        self.memory: SessionMemory | None = None
        # The MCP servers, when any are configured.
        self.mcp: McpManager | None = None
        # What a front end should tell the user on opening the session (it was forked from a busy one).
        self.notices: list[str] = []
        # Warnings for the next turn to show and keep (an agent definition that could not be read).
        self.pending_notices: list[str] = []
        # The user's hooks, and the project's in a trusted folder (agent_repl.core.loop.hooks calls them).
        self.hooks = HookRunner(
            configured_hooks(settings.hooks, settings.project_hooks, project_trusted=hooks_trusted(settings)),
            cwd=cwd,
            session_id=session_id,
            transcript_path=lambda: str(self.sink.path),
            permission_mode=self._hook_permission_mode,
            redactor=self.redactor,
            scrubbed_env=settings.scrubbed_env,
            output_dir=tool_results_dir,
        )
        # The SessionStart source still to run on the first turn (startup, resume, clear), or None.
        self.start_source: str | None = "resume" if history else "startup"
        # Set for a sub-agent's session: its stop runs SubagentStop hooks instead of Stop.
        self.agent_id: str | None = None

    @property
    def tool_definitions(self) -> list[dict[str, Any]]:
        """The tool list the next request sends: the same bytes until a compaction loads tools."""
        return self.definitions_for(self.loaded_tools)

    def definitions_for(self, loaded: frozenset[str]) -> list[dict[str, Any]]:
        """The tool list with the deferred tools in `loaded` sent loaded (memoized: one list object)."""
        loaded = loaded & self.deferred_tools
        if self._definitions is None or self._definitions[0] != loaded:
            self._definitions = (loaded, tool_definitions(
                list(self.tools.values()), self.deferred_tools - loaded, web=self.settings.web_tools
            ))
        return self._definitions[1]

    @property
    def effort(self) -> str | None:
        """The effort level this session's requests carry (None: none, the API's default)."""
        settings = self.settings
        return chosen_effort(
            self._model,
            session_effort=settings.session_effort,
            model_effort=settings.model_effort,
            effort=settings.effort,
            thinking=settings.thinking,
        )

    def set_effort(self, effort: SessionEffort | None, *, saved: bool = False) -> None:
        """`/effort`: this level (or "auto", the API's default) on every later request of this
        session and of the sub-agents it starts; `saved`: also remembered for this model."""
        model_effort = dict(self.settings.model_effort)
        if saved and effort is not None and effort != "auto":
            model_effort[self._model] = effort
        elif saved:
            model_effort.pop(self._model, None)
        self.settings = self.settings.model_copy(update={"session_effort": effort, "model_effort": model_effort})
        self._configure_model()

    def request_fields(self) -> dict[str, Any]:
        """The `thinking` and `output_config` fields every request of this session carries."""
        settings = self.settings
        return request_fields(
            thinks_by_default=self.model_info.thinking_default_on,
            effort=self.effort,
            thinking=settings.thinking,
            display=settings.thinking_display,
        )

    @property
    def thinking_display(self) -> str | None:
        """The thinking display the requests ask for; None when they name none."""
        thinking = self.request_fields().get("thinking") or {}
        return thinking.get("display")

    def apply_settings(self, **changes: Any) -> None:
        """Settings changed in place (/config): later requests of this session use them."""
        self.settings = self.settings.model_copy(update=changes)
        self._definitions = None
        self._configure_model()

    def turn_off_web_tools(self) -> None:
        """Leave the API's web tools out of every later request of this session."""
        self.settings = self.settings.model_copy(update={"web_tools": False})
        self._definitions = None

    def request_tools(self, loaded: frozenset[str]) -> list[dict[str, Any]]:
        """The tool list for a request whose view's compact boundary loaded `loaded`."""
        self.loaded_tools = loaded
        return self.definitions_for(loaded)

    def take_notices(self) -> list[str]:
        """Warnings for the user that arose outside a turn (an MCP server that failed or died, a
        Notification hook that failed)."""
        notices, self.pending_notices = self.pending_notices, []
        return notices + (self.mcp.take_notices() if self.mcp is not None else [])

    def take_task_notifications(self) -> list[str]:
        """Background shells that ended since the model last heard, each announced once; a
        sub-agent shares its parent's shells but leaves the announcing to the parent."""
        return [] if self.agent_id is not None else self.shells.take_notifications()

    def add_directory(self, path: Path) -> Path:
        """Work in `path` too for the rest of the session (`/add-dir`, `--add-dir`): the tools may
        read and edit there as in the project, and sandboxed commands may write there. Raises
        NotADirectoryError for a path that is not an existing directory."""
        directory = path.expanduser().resolve()
        if not directory.is_dir():
            raise NotADirectoryError(f"{path} is not a directory")
        if directory not in self.settings.add_dirs:
            self.settings.add_dirs.append(directory)
        if directory not in self.permissions.roots:
            self.permissions.roots = (*self.permissions.roots, directory)
        self.sandbox.add_write_root(directory)
        return directory

    def _hook_permission_mode(self) -> str:
        return self.permission_mode_name

    @property
    def permission_mode_name(self) -> str:
        """The mode as Claude Code names it: bypassPermissions and dontAsk besides the cycled three."""
        if self.settings.skip_permissions:
            return "bypassPermissions"
        if self.settings.dont_ask and self.mode.mode is PermissionMode.DEFAULT:
            return "dontAsk"
        return self.mode.mode.value

    @property
    def model(self) -> str:
        return self._model

    @model.setter
    def model(self, model: str) -> None:
        """Switching models (/model, a fallback) also points the pipeline at the new model."""
        self._model = model
        self._configure_model()
        self.projector.set_window(self.settings.context_window or self.model_info.context_window)

    @property
    def model_info(self) -> ModelInfo:
        return self.model_catalog.info(self._model)

    def _configure_model(self) -> None:
        def seed(loaded: frozenset[str]) -> str:
            tools = self.definitions_for(loaded)
            return prefix_seed(build_request(model=self._model, max_tokens=1, system=self.system_prompt, tools=tools, messages=[]))

        info = self.model_info
        self.projector.configure_model(
            prompt_seed=seed(frozenset()),
            thinking_on=thinking_on(info.thinking_default_on, self.settings.thinking),
            request_fields=self.request_fields(),
            on_demand_compaction=info.on_demand_compaction and self.settings.api_compaction,
            prompt_seed_for=seed,
            cache_read_multiplier=info.cache_read_multiplier,
            output_multiplier=info.output_multiplier,
            token_ratio=info.token_ratio,
        )

    def full_history(self) -> list[Message]:
        """Every entry of the session, the ones a resume left in the transcript read back (not kept)."""
        if self.earlier is None:
            return self.messages
        return [*self.earlier.load(), *self.messages]

    @property
    def history_length(self) -> int:
        """How many entries the session has, counting those a resume left in the transcript."""
        return len(self.messages) + (self.earlier.count if self.earlier is not None else 0)

    @property
    def last_uuid(self) -> str | None:
        return self.messages[-1].uuid if self.messages else None

    async def append(self, message: MessageT) -> MessageT:
        """Link the entry into the chain, keep it, and write it before anything else happens."""
        self._stamp(message, self.last_uuid)
        await self.sink.append_message(message)
        self.messages.append(message)
        return message

    async def append_many(self, messages: Sequence[Message]) -> None:
        """Append entries that belong together (a compaction's boundary and summary) in one write."""
        parent = self.last_uuid
        for message in messages:
            self._stamp(message, parent)
            parent = message.uuid
        await self.sink.append_messages(messages)
        self.messages.extend(messages)

    def _stamp(self, message: Message, parent: str | None) -> None:
        message.parent_uuid = parent
        message.session_id = self.session_id
        message.timestamp = iso_timestamp(self.clock())
        self.redactor.message(message)

    async def append_record(self, record: Any) -> None:
        await self.sink.append_record(record)

    async def ensure_started(self) -> None:
        """A new session opens with one meta message of environment context; a resumed one keeps its own."""
        if not self.messages:
            await self.append(UserMessage(content=self._context_provider(self.cwd), is_meta=True))

    async def ensure_capabilities(self) -> None:
        """Before the first request: the model's facts from the endpoint (`GET /v1/models`).

        An answer kept on disk is used as it is; when it is older than a day the endpoint is asked
        again in the background, and the new facts apply from the request after it answers. With
        no answer kept, the first request waits for one (the endpoint's window may be smaller)."""
        if self.capabilities_checked:
            return
        self.capabilities_checked = True
        catalog = self.model_catalog
        if not catalog.knows(self.model):
            await self.refresh_model_facts()
        elif not catalog.is_fresh(self.model, self.clock()):
            self.model_refresh = asyncio.create_task(self.refresh_model_facts())
        self.projector.configure_endpoint(cache_editing=catalog.supports_cache_editing(self.model))

    async def refresh_model_facts(self) -> None:
        """Ask the endpoint about its models (the listing, else the model alone) and keep the answer."""
        model = self.model
        answers = await self.client.model_listing()
        if answers is None or model not in answers:
            try:
                data = await self.client.model_data(model)
            except UnknownModel:
                data = None  # the request itself will say so
            answers = {**(answers or {}), **({model: data} if data is not None else {})}
        if not answers:
            return
        changed = self.model_catalog.remember(answers, self.clock())
        if changed and model == self.model:
            self.model = model  # the new window, output cap and capabilities take effect
        self.projector.configure_endpoint(cache_editing=self.model_catalog.supports_cache_editing(self.model))

    def tool_runtime(self, ask: ApprovalCallback | None) -> ToolRuntime:
        return ToolRuntime(
            tools=self.tools,
            cwd=self.cwd,
            tool_results_dir=self.tool_results_dir,
            permissions=self.permissions,
            ask=ask,
            state=self.tool_state,
            ports=self.tool_ports,
            redactor=self.redactor,
            files=self.files,
            mode=self.mode,
            before_change=self.file_history.before_change if self.file_history is not None else None,
            scrubbed_env=self.settings.scrubbed_env,
            hooks=self.hooks,
            notify=self._notify,
            sandbox=self.sandbox,
        )

    async def _notify(self, message: str, notification_type: str) -> None:
        from agent_repl.core.loop.hooks import notify

        await notify(self, message, notification_type)

    @property
    def permission_mode(self) -> PermissionMode:
        return self.mode.mode

    def add_usage(self, usage: Usage, model: str) -> None:
        self.last_usage = usage
        self.usage_total = self.usage_total + usage
        self.usage_by_model[model] = self.usage_by_model.get(model, Usage()) + usage
        cost = cost_usd(usage, model, self.model_catalog.info(model))
        self.cost_total_usd = add_cost(self.cost_total_usd, cost)
        self.cost_by_model[model] = add_cost(self.cost_by_model.get(model, 0.0), cost)

    def interrupt(self) -> None:
        """Stop the running turn; the loop records what happened and leaves a valid history."""
        self.cancelled.set()

    def run_shell(self, command: str) -> AsyncIterator[AgentEvent]:
        """`!command`: the user's own shell command, through Bash, kept in the conversation."""
        from agent_repl.core.loop.user_actions import run_shell_command

        return run_shell_command(self, command)

    async def run_turn(self, prompt: str, *, max_turns: int | None = None) -> AsyncIterator[AgentEvent]:
        """The turn's events; a session that can no longer be saved ends the turn with one error."""
        from agent_repl.core.loop.query import run_turn

        requests_before = self.request_count
        try:
            async for event in run_turn(self, prompt, max_turns=max_turns):
                yield event
        except SessionWriteError as exc:
            yield ErrorEvent(message=str(exc), recoverable=False)
            yield TurnEnded(reason="error", num_requests=self.request_count - requests_before, usage=Usage())
