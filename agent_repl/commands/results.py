"""What a slash command returns: plain data that each front end renders in its own way."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent_repl.core.model.messages import Usage
from agent_repl.transcript.sessions import SessionInfo

Level = Literal["info", "warning", "error"]


@dataclass(frozen=True)
class TextOutput:
    text: str
    level: Level = "info"


@dataclass(frozen=True)
class CommandInfo:
    name: str
    usage: str
    summary: str


@dataclass(frozen=True)
class HelpReport:
    commands: list[CommandInfo]
    keys: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class CostReport:
    model: str
    usage: Usage
    # None: a model used has no known price.
    cost_usd: float | None
    requests: int


@dataclass(frozen=True)
class ModelReport:
    model: str
    previous: str | None
    context_window: int
    known: list[str]


@dataclass(frozen=True)
class ExitRequest:
    pass


@dataclass(frozen=True)
class SessionSwitched:
    """The host now holds another session (after /clear or /resume); the UI redraws its history."""

    session_id: str
    previous_id: str
    previous_path: str
    messages: int
    resumed: bool
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ResumeChoices:
    """No argument to /resume: the sessions to pick from, newest first."""

    sessions: list[SessionInfo]
    current_id: str


@dataclass(frozen=True)
class ContextView:
    """The /context report (an `agent_repl.context.report.ContextReport`)."""

    report: Any


@dataclass(frozen=True)
class SnipChoices:
    """No argument to /snip: the messages that may be snipped, oldest first."""

    items: list[Any]


@dataclass(frozen=True)
class SnipDone:
    result: Any
    text: str


@dataclass(frozen=True)
class CompactDone:
    """A manual compaction finished; the boundary and the summary are now in the history."""

    tokens_before: int
    tokens_after: int


@dataclass(frozen=True)
class McpReport:
    """/mcp: each configured server (an `agent_repl.mcp.manager.McpServerStatus`) and its tools."""

    servers: list[Any]
    # How many MCP tools go out deferred (loaded through ToolSearch), and why.
    deferred: int = 0
    tool_search: str = "auto"
    config_hint: str = ""


@dataclass(frozen=True)
class AgentRow:
    name: str
    description: str
    scope: str
    source: str
    tools: list[str]
    model: str


@dataclass(frozen=True)
class AgentsReport:
    """/agents: the agent types Task can start, and the definition files that were left out and why."""

    agents: list[AgentRow]
    problems: list[str]
    hint: str = ""


@dataclass(frozen=True)
class RewindChoices:
    """No argument to /rewind: the prompts to go back to (`agent_repl.context.rewind.RewindTarget`s)."""

    targets: list[Any]


@dataclass(frozen=True)
class RewindOptions:
    """A prompt picked: what to restore (code, conversation or both) is asked next."""

    target: Any


@dataclass(frozen=True)
class RewindDone:
    text: str
    # The prompt's text, put back in the input so the user can edit and resend it.
    prompt_text: str = ""
    level: Level = "info"


@dataclass(frozen=True)
class StatusReport:
    """/status: what this session runs with, as (label, value) rows."""

    rows: list[tuple[str, str]]


@dataclass(frozen=True)
class PermissionsReport:
    allow: list[str]
    deny: list[str]
    mode: str
    settings_file: str


@dataclass(frozen=True)
class EditorRequest:
    """/memory: the front end opens these files in the editor (the terminal is handed over)."""

    command: list[str]
    paths: list[str]


@dataclass(frozen=True)
class ClipboardExport:
    """/export with no file: the front end copies `markdown` to the clipboard where the terminal
    offers one (OSC 52), else writes it to `fallback` (agent_repl.commands.export.write_export)."""

    markdown: str
    fallback: Path


@dataclass(frozen=True)
class PromptRequest:
    """/init: the front end sends `prompt` to the model as the next turn (shown as `shown`)."""

    prompt: str
    shown: str


@dataclass(frozen=True)
class DoctorCheck:
    """One /doctor check: what was checked, ok / warn / fail, and what was seen."""

    name: str
    status: Literal["ok", "warn", "fail"]
    detail: str


@dataclass(frozen=True)
class DoctorReport:
    checks: list[DoctorCheck]


@dataclass(frozen=True)
class ConfigRow:
    key: str
    value: str
    source: str


@dataclass(frozen=True)
class ConfigReport:
    """/config: the settings it changes, their values and where each comes from."""

    rows: list[ConfigRow]
    user_file: str


@dataclass(frozen=True)
class MemoryTarget:
    """A memory file a `# note` may go to: the /remember flag that names it, a label, its path."""

    flag: str
    label: str
    path: str


@dataclass(frozen=True)
class MemoryChoices:
    """`# note` with no file named yet: the front end asks which file and runs `/remember FLAG NOTE`."""

    note: str
    targets: list[MemoryTarget]


CommandResult = (
    TextOutput
    | HelpReport
    | CostReport
    | ModelReport
    | ExitRequest
    | SessionSwitched
    | ResumeChoices
    | ContextView
    | SnipChoices
    | SnipDone
    | CompactDone
    | McpReport
    | AgentsReport
    | RewindChoices
    | RewindOptions
    | RewindDone
    | StatusReport
    | PermissionsReport
    | EditorRequest
    | PromptRequest
    | MemoryChoices
    | DoctorReport
    | ConfigReport
    | ClipboardExport
)
