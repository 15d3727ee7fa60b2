"""What a tool is to the query loop (docs/architecture.md 7.1).

Concrete tools live in `agent_repl.tools` (the repository's `tools/` folder) and implement `Tool`.
Errors are values: a tool returns a `ToolOutput` with `is_error=True` and one text for the model,
never raises out of `run` for a failure the model should hear about.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from agent_repl.core.model.messages import DocumentBlock, ImageBlock, TextBlock, ToolReferenceBlock
from agent_repl.core.permissions.rules import PermissionRequest
from agent_repl.core.sandbox import Sandbox
from agent_repl.core.tooling.background import BackgroundShells
from agent_repl.core.tooling.display import DEFAULT_DISPLAY, ToolDisplay
from agent_repl.core.tooling.file_state import ReadLedger


class FileRedactor(Protocol):
    """Rewrites a file without credentials (agent_repl.core.tooling.redaction.SecretRedactor is one)."""

    def file(self, path: Path) -> bool: ...


class SnipOutcome(Protocol):
    @property
    def is_error(self) -> bool: ...

    @property
    def model_text(self) -> str: ...

    @property
    def user_text(self) -> str: ...

    @property
    def structured(self) -> dict[str, Any]: ...


# Snips the view by `[id:]` tags: (start_id, end_id, reason) -> what happened.
SnipCallback = Callable[[str, str | None, str | None], Awaitable[SnipOutcome]]


class TaskRequest(Protocol):
    """What a Task call asks for (tools.task.TaskArgs)."""

    @property
    def description(self) -> str: ...

    @property
    def prompt(self) -> str: ...

    @property
    def subagent_type(self) -> str | None: ...


class SubagentStarter(Protocol):
    """Runs a Task call's sub-agent to its final answer (agent_repl.agents.runner.SubagentRunner)."""

    async def run_task(self, args: TaskRequest, ctx: ToolContext) -> ToolOutput: ...


@dataclass
class ToolPorts:
    """What the session lends its tools beyond files and processes: the context pipeline's snip
    (for Snip), the sub-agent runner (for Task) and the background shells (Bash, BashOutput,
    KillShell)."""

    snip: SnipCallback | None = None
    subagents: SubagentStarter | None = None
    shells: BackgroundShells | None = None


DEFAULT_MAX_RESULT_SIZE_CHARS = 50_000


@dataclass
class ToolOutput:
    """A tool's answer: `content` is what the model sees, `structured` the transcript's
    `toolUseResult` copy, `summary` one line for the UI."""

    content: str | list[TextBlock | ImageBlock | DocumentBlock | ToolReferenceBlock]
    is_error: bool = False
    structured: dict[str, Any] | None = None
    summary: str = ""
    # The call never ran because permission was refused (print mode's `permission_denials`).
    denied: bool = False

    @classmethod
    def error(cls, text: str, summary: str = "") -> ToolOutput:
        first_line = text.splitlines()[0][:200] if text else ""
        return cls(content=text, is_error=True, summary=summary or first_line)


@dataclass
class ToolContext:
    """Everything a running tool may touch, passed in (no globals)."""

    cwd: Path
    # Where results over a tool's limit are written: <session>/tool-results/.
    tool_results_dir: Path
    tool_use_id: str = ""
    # Set when the user interrupts the turn; long-running tools poll or await it.
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    # Called with partial output as it arrives (Bash streams here); optional.
    on_progress: Callable[[str], Awaitable[None] | None] | None = None
    # Called with what a sub-agent did (a `SubagentProgress` event), for the call's block.
    on_event: Callable[[Any], None] | None = None
    # Bash keeps its working directory across calls here; tools that change it write it back.
    state: dict[str, Any] = field(default_factory=dict)
    ports: ToolPorts = field(default_factory=ToolPorts)
    # What a tool must not leave in the files it writes (credentials; `.file(path)` rewrites one).
    redactor: FileRedactor | None = None
    # Environment variables a process the tool starts must not get.
    scrubbed_env: frozenset[str] = frozenset()
    # The files the model has read or written in this session, as they were then.
    files: ReadLedger = field(default_factory=ReadLedger)
    # Awaited with a path just before a tool changes that file (the session checkpoints it).
    before_change: Callable[[Path], Awaitable[None]] | None = None
    # The OS sandbox Bash runs commands in (None: none for this session).
    sandbox: Sandbox | None = None


Args = TypeVar("Args", bound=BaseModel)


class Tool(Generic[Args]):
    """Base class for built-in tools: a pydantic args model, a sibling .md description, limits.

    `Tool[ReadArgs]` runs with `ReadArgs`: the loop validates the model's input with `args_model`
    (`parse_args`) before `prepare`, `permission_request` and `run` see it.
    """

    # Set on each subclass; a tool made at run time (an MCP server's) names itself per instance.
    name: str
    # A plain class attribute (a ClassVar cannot name the type variable); set on each subclass.
    args_model: type[Args]
    # None means unlimited (Read: reading is how persisted output comes back).
    max_result_size_chars: ClassVar[int | None] = DEFAULT_MAX_RESULT_SIZE_CHARS
    is_read_only: ClassVar[bool] = False
    # Whether microcompact may clear this tool's old results (Read, Bash, Grep, Glob, Edit, Write).
    microcompact_clearable: ClassVar[bool] = False
    # Keys of `structured` the transcript keeps when the result is persisted for its size.
    kept_when_persisted: ClassVar[frozenset[str]] = frozenset()
    # Changes files (Edit, Write): asked with the diff shown, run without asking in acceptEdits.
    edits_files: ClassVar[bool] = False
    # The model-facing description; subclasses load it from their sibling .md file (a tool whose
    # description lists what the session holds, such as Task's agent types, sets it per instance).
    description: str = ""
    # How the screen shows a call: headline, result summary, body kind (`display.ToolDisplay`).
    display: ClassVar[ToolDisplay] = DEFAULT_DISPLAY

    async def run(self, args: Args, ctx: ToolContext) -> ToolOutput:
        raise NotImplementedError

    def parse_args(self, raw: dict[str, Any]) -> Args | ToolOutput:
        """Validate the model's input; a validation failure becomes an error result for the model."""
        try:
            return self.args_model.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}" for err in exc.errors()
            )
            return ToolOutput.error(f"InputValidationError: {self.name} was called with invalid input: {problems}")

    def api_schema(self) -> dict[str, Any]:
        """The tool definition sent to the API; byte-stable for a given tool."""
        return {"name": self.name, "description": self.description, "input_schema": input_schema(self.args_model)}

    def permission_request(self, args: Args, ctx: ToolContext) -> PermissionRequest | None:
        """What the rules must allow before the call runs; None when nothing needs allowing.

        A tool that changes things asks by default; a reading tool names the path it reads
        (`reads=True`), so reads outside the project are asked.
        """
        if self.is_read_only:
            return None
        description = str(getattr(args, "description", "") or "")
        return PermissionRequest(
            self.name, self.permission_key(args), description=description, writes=self.edits_files
        )

    def permission_key(self, args: Args) -> str:
        """The string permission rules match against (Edit and Write: the file's path)."""
        return ""

    async def prepare(self, args: Args, ctx: ToolContext) -> ToolOutput | Any:
        """Checked before permission is asked: an error `ToolOutput` ends the call unasked (a stale
        file, an ambiguous match); anything else is shown in the prompt (a `FileChange`)."""
        return None


# An arguments model's JSON schema, built once per process (pydantic builds it anew on every call,
# and every session start and every request asks for every tool's).
_INPUT_SCHEMAS: dict[type[BaseModel], dict[str, Any]] = {}


def input_schema(args_model: type[BaseModel]) -> dict[str, Any]:
    """`args_model`'s JSON schema as the API takes it: no title, references inlined (a fresh copy)."""
    schema = _INPUT_SCHEMAS.get(args_model)
    if schema is None:
        schema = args_model.model_json_schema()
        schema.pop("title", None)
        definitions = schema.pop("$defs", None)
        if definitions:
            schema = _inline_refs(schema, definitions)
        _INPUT_SCHEMAS[args_model] = schema
    return copy.deepcopy(schema)


def _inline_refs(node: Any, definitions: dict[str, Any]) -> Any:
    """Nested models written out in place (no `$defs`, no titles), as a plain schema reads best."""
    if isinstance(node, list):
        return [_inline_refs(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _inline_refs(definitions[ref.removeprefix("#/$defs/")], definitions)
    return {k: _inline_refs(v, definitions) for k, v in node.items() if not (k == "title" and isinstance(v, str))}


def load_description(module_file: str, name: str) -> str:
    """Read the sibling `<name>.md` model-facing description of a tool module."""
    return (Path(module_file).with_name(f"{name}.md")).read_text(encoding="utf-8").strip()
