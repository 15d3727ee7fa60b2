"""Settings: files, environment and flags, validated with pydantic and reported clearly when wrong.

Precedence, lowest first: defaults, `<home>/settings.json`, `./.agent_repl/settings.json`, the
environment, command-line flags. The project file's allow rules count only in a trusted folder
(`agent_repl.core.config.trust`); until then they wait in `untrusted_allow`, and every other key of that
file but its deny rules waits in `held_back` (permission mode, model, windows, sub-agent tools...).
Nothing is read at import time: `load_settings` takes the environment and paths it may look at.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agent_repl.core.config.hooks import HooksSettings
from agent_repl.core.config.thinking_request import (
    BETWEEN_TOOLS_LEVELS,
    Effort,
    SessionEffort,
    ThinkingDisplay,
    ThinkingMode,
)
from agent_repl.core.config.trust import TrustError, TrustStatus, WorkspaceTrust
from agent_repl.core.model.mcp_config import McpServerConfig
from agent_repl.core.permissions.credentials import DEFAULT_HOME as DEFAULT_HOME_TEXT
from agent_repl.core.permissions.credentials import credential_names, looks_like_credential, settings_files
from agent_repl.core.permissions.credentials import home_from_env as home_from_env
from agent_repl.core.permissions.rules import Rule
from agent_repl.core.sandbox.policy import SandboxSettings

DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_HOME = Path(DEFAULT_HOME_TEXT)


class SettingsError(Exception):
    """A settings file or value is wrong; the message names the file and the field."""


class PermissionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)

    @field_validator("allow", "deny")
    @classmethod
    def _rules_parse(cls, rules: list[str]) -> list[str]:
        # A rule that does not parse is reported with its file, never dropped (a lost deny rule is a hole).
        for rule in rules:
            Rule.parse(rule)
        return rules


class StatusLineSettings(BaseModel):
    """`statusLine` (Claude Code's name) or `status_line`: a command whose first lines of output,
    given the session as JSON on stdin, are shown above the built-in status line."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    # Columns of space before the text.
    padding: int = Field(default=0, ge=0, le=40)


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = DEFAULT_MODEL
    fallback_model: str | None = None
    # Thinking counts toward it, so a normal turn of a thinking model needs room (a cut reply is
    # retried once with 64K).
    max_output_tokens: int = Field(default=32_000, ge=1)
    # How hard the model works (`output_config.effort`); unset: the API's default.
    effort: Effort | None = None
    # The level `/effort` saved per model (in the user's settings file); wins over `effort`.
    model_effort: dict[str, Effort] = Field(default_factory=dict)
    # Not from files: what `/effort` chose for this session ("auto": the API's default).
    session_effort: SessionEffort | None = Field(default=None, exclude=True)
    # "between_tools": no up-front thinking, the model thinks only between tool calls (Sonnet 5.5).
    thinking: ThinkingMode = "adaptive"
    # "summarized": ask models that think by default to return their thinking and progress notes
    # (their API default is "omitted", empty text); "updates" only the notes between tool calls
    # (a beta display, what Claude Code asks for); "omitted" sends nothing and shows nothing.
    thinking_display: ThinkingDisplay = "summarized"
    # A smaller window than the model's, so compaction can be exercised cheaply.
    context_window: int | None = Field(default=None, ge=1_000)
    max_retries: int = Field(default=4, ge=0, le=20)
    # Seconds to wait for the next bytes of a response (a stalled stream fails, then is retried).
    stream_idle_timeout: float = Field(default=120.0, gt=0, le=3_600)
    # Summarize the conversation when it nears the window; off means the blocking limit applies.
    autocompact: bool = True
    # How a full context is handled: a model summary (autocompact) or collapsed spans (collapse).
    context_strategy: Literal["autocompact", "collapse"] = "autocompact"
    # Let the API write the summary where the model offers on-demand compaction (kept turns keep
    # their thinking); off: always our own nine-section summary.
    api_compaction: bool = True
    # Clear old tool results once what the last request cached has expired (5 minutes, or the
    # hour), when the next request writes the prefix again anyway; off: after the fixed 60-minute
    # gap. Chosen by the replay benchmark (BENCHMARKS.md, pauses condition at 200K, the row
    # "agent-repl without clears at expiry").
    clear_at_cache_expiry: bool = True
    # Off: resuming a session whose last reply is old keeps its tool results as they were on the
    # first request (no time-based clear for the gap the resume made; a later gap still clears).
    clear_on_resume: bool = True
    # After a compaction, at most this much of the current turn stays verbatim (a 200K-window
    # amount, scaled in smaller windows) and recently read files come back within this share of
    # the window. Chosen by the replay benchmark (BENCHMARKS.md, 50K and 200K, the row
    # "agent-repl with the earlier kept tail").
    compact_kept_tail_tokens: int = Field(default=10_000, ge=0)
    compact_reinject_share: float = Field(default=0.05, ge=0, le=0.5)
    # After a compaction, a list of the paths the earlier tool calls named (read, searched, run), so
    # the model need not rely on the summary for them. Chosen by the replay benchmark (BENCHMARKS.md,
    # the rows "agent-repl without the file list").
    compact_file_list: bool = True
    # In windows of at least this many tokens, also compact below the threshold when carrying the
    # context over the expected rest of the session costs more than summarizing it (0: never).
    # Chosen by the replay benchmark (BENCHMARKS.md: at 200K and 1M the rows "agent-repl without
    # the cost-aware trigger" cost more; at 50K "agent-repl with the cost-aware trigger" did).
    compact_cost_trigger_min_window: int = Field(default=200_000, ge=0)
    # How many times its price a compaction counts when that trigger spaces compactions (the detail
    # each summary loses is worth more than its tokens; agent_repl.context.autocompact). Chosen by
    # the replay benchmark with summaries of a real size (200K, the rows "agent-repl with the cost
    # trigger's margin at 5" and "compacting whenever it pays"): 2 cost 0.83x codex-style, 5 0.89x
    # with 1-2 fewer compactions on each long session, 1 0.79x with up to 3 more.
    compact_cost_trigger_margin: float = Field(default=2.0, ge=1.0)
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    # Declare the API's web_search and web_fetch server tools (WebSearch and WebFetch).
    web_tools: bool = True
    # The permission mode a session starts in (Shift+Tab cycles it; `--permission-mode` sets it).
    permission_mode: Literal["default", "acceptEdits", "plan"] = "default"
    # More environment variables that hold credentials: taken out of agent-repl's own environment
    # at start and out of every command's, and their values redacted.
    credential_env: list[str] = Field(default_factory=list)
    # User settings only: a shell command that prints the API key (run once at start).
    api_key_helper: str | None = None
    # MCP servers by name; those of the project's settings file are kept apart (they need trust).
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    project_mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    # Commands run on the loop's events (agent_repl.core.config.hooks); the project's are kept apart
    # (they need trust, like its MCP servers).
    hooks: HooksSettings = Field(default_factory=dict)
    project_hooks: HooksSettings = Field(default_factory=dict)
    # An output token budget for every turn (`--max-output-budget`); a prompt's own "+500k" wins.
    max_output_budget: int | None = Field(default=None, ge=1)
    # Seconds a server may take to start and list its tools, and one of its tool calls to answer.
    mcp_startup_timeout: float = Field(default=30.0, gt=0, le=3_600)
    mcp_tool_timeout: float = Field(default=600.0, gt=0, le=86_400)
    # Deferred MCP tools: "auto" defers them when their definitions pass `tool_search_share` of the
    # context window (the model then loads schemas through ToolSearch), "always" or "never".
    tool_search: Literal["auto", "always", "never"] = "auto"
    tool_search_share: float = Field(default=0.10, gt=0, le=1)
    # The OS sandbox for Bash commands (agent_repl.core.sandbox): on where the system offers one.
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    # A command that draws the user's own status line (needs trust when a project's file sets it).
    status_line: StatusLineSettings | None = None
    # The tools a sub-agent (Task) gets when its agent definition names none; unset: Glob, Grep, Read.
    subagent_tools: list[str] | None = None
    # Not from files: the environment and flags only (the user's file may also set api_key).
    home: Path = DEFAULT_HOME
    api_key: str | None = Field(default=None, exclude=True, repr=False)
    auth_token: str | None = Field(default=None, exclude=True, repr=False)
    # Name -> value of the credentials in the environment (scrubbed ones and credential-named
    # ones commands still get), kept in memory to redact them.
    credentials: dict[str, str] = Field(default_factory=dict, exclude=True, repr=False)
    base_url: str | None = None
    skip_permissions: bool = False
    # `--max-budget-usd`: no new request once the session has cost this much.
    max_budget_usd: float | None = Field(default=None, gt=0)
    # `--permission-mode dontAsk`: a call no rule allows is refused, never asked.
    dont_ask: bool = False
    # Flags only: `--system-prompt` replaces the built-in instructions (the environment section
    # stays), `--append-system-prompt` adds to the end of whichever is used.
    system_prompt: str | None = Field(default=None, exclude=True, repr=False)
    append_system_prompt: str | None = Field(default=None, exclude=True, repr=False)
    # Flags only: the id a new session takes (`--session-id`), and sub-agent definitions given as
    # JSON (`--agents`), by name.
    session_id: str | None = None
    flag_agents: dict[str, Any] = Field(default_factory=dict, exclude=True, repr=False)
    # `--mcp-config`: servers for this run (the user's word, like their own settings file), and
    # those an SDK host runs in its own process (`{"type": "sdk"}`), by name; with
    # `--strict-mcp-config` no other server starts.
    flag_mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    sdk_mcp_servers: list[str] = Field(default_factory=list)
    strict_mcp_config: bool = False
    # Folders beside the working directory the reading tools may read unasked (`--add-dir`).
    add_dirs: list[Path] = Field(default_factory=list)
    # Allow rules of a project settings file held back until the user trusts that folder.
    untrusted_allow: list[str] = Field(default_factory=list)
    # Whether the user trusts this folder (or `--trust-project`): its own MCP servers may start.
    project_trusted: bool = False
    # Every other key of an untrusted project's settings file, with the value it would give the
    # setting (only those that would change it): nothing of it applies until the folder is trusted.
    held_back: dict[str, Any] = Field(default_factory=dict, exclude=True, repr=False)
    # The grant files of a folder trusted before that changed since (the question shows them).
    trust_changes: list[str] = Field(default_factory=list, exclude=True, repr=False)
    # Keys of an untrusted project's file that agent-repl does not know (Claude Code's `env`...):
    # never applied; named with the rest of what waits for trust.
    unknown_held_back: list[str] = Field(default_factory=list, exclude=True, repr=False)
    # The folder's grant files as they were when the settings were read: a "yes" trusts exactly those.
    grant_digests: dict[str, str] | None = Field(default=None, exclude=True, repr=False)

    @property
    def scrubbed_env(self) -> frozenset[str]:
        """The environment variables no process the agent starts may get."""
        return credential_names(self.credential_env)

    @field_validator("credential_env")
    @classmethod
    def _names_are_variables(cls, names: list[str]) -> list[str]:
        for name in names:
            if not name or "=" in name or "\0" in name:
                raise ValueError(f"{name!r} is not an environment variable name")
        return names

    @model_validator(mode="after")
    def _effort_fits_the_thinking_mode(self) -> Settings:
        if self.thinking == "between_tools" and self.effort is not None and self.effort not in BETWEEN_TOOLS_LEVELS:
            raise ValueError(f"effort {self.effort} needs up-front thinking; with thinking between_tools use low, medium or high")
        return self

    @field_validator("model")
    @classmethod
    def _model_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()


# Keys a settings file may set; the rest come from the environment and flags.
FILE_KEYS = {
    "model",
    "fallback_model",
    "max_output_tokens",
    "effort",
    "model_effort",
    "thinking",
    "thinking_display",
    "context_window",
    "max_retries",
    "stream_idle_timeout",
    "autocompact",
    "context_strategy",
    "api_compaction",
    "clear_at_cache_expiry",
    "clear_on_resume",
    "compact_kept_tail_tokens",
    "compact_reinject_share",
    "compact_file_list",
    "compact_cost_trigger_min_window",
    "compact_cost_trigger_margin",
    "permissions",
    "permission_mode",
    "web_tools",
    "credential_env",
    "mcp_servers",
    "hooks",
    "mcp_startup_timeout",
    "mcp_tool_timeout",
    "tool_search",
    "tool_search_share",
    "subagent_tools",
    "sandbox",
    "status_line",
}
# Claude Code's names for keys, accepted in settings files and read as ours.
KEY_ALIASES = {"statusLine": "status_line"}
# Keys of a project's settings file that apply before the folder is trusted: deny rules and more
# credential names only take away; its MCP servers and hooks are kept apart (project_mcp_servers,
# project_hooks) and start only in a trusted folder. Every other key waits for trust.
TRUST_FREE_KEYS = {"permissions", "credential_env", "project_mcp_servers", "project_hooks"}
# Keys only the user's own settings file may set: a project's file is shared, and a helper runs code.
USER_ONLY_KEYS = {"api_key", "api_key_helper"}


def read_settings_file(path: Path, *, user: bool = False, ignored: list[str] | None = None) -> dict[str, Any]:
    """The file's settings, validated. With `ignored` (an untrusted project's file, which applies
    nothing but its deny rules) unknown and user-only keys are listed there and dropped instead of
    stopping the start."""
    if path.exists() and not path.is_file():  # a device or a fifo would never end (or never start)
        raise SettingsError(f"{path}: cannot read settings: not a regular file")
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read settings: {exc.strerror}") from exc
    try:
        data = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        raise SettingsError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: settings must be a JSON object, got {type(data).__name__}")
    data = {KEY_ALIASES.get(key, key): value for key, value in data.items()}
    known = FILE_KEYS | USER_ONLY_KEYS if user else FILE_KEYS
    if ignored is not None:
        ignored.extend(sorted(set(data) - known))
        data = {key: value for key, value in data.items() if key in known}
    misplaced = sorted(set(data) & USER_ONLY_KEYS - known)
    if misplaced:
        raise SettingsError(
            f"{path}: {', '.join(misplaced)} may only be set in your own settings file (<home>/settings.json), "
            "not in a project's"
        )
    unknown = sorted(set(data) - known)
    if unknown:
        raise SettingsError(f"{path}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    if "api_key" in data and not (isinstance(data["api_key"], str) and data["api_key"].strip()):
        raise SettingsError(f"{path}: api_key: must be a non-empty string")
    try:
        Settings.model_validate(data)
    except ValidationError as exc:
        raise SettingsError(f"{path}: {_describe(exc)}") from exc
    return data


def read_flag_settings(text: str, cwd: Path) -> dict[str, Any]:
    """`--settings`: a JSON object, or the path of a file holding one (relative to `cwd`), with the
    keys a user's settings file may hold."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise SettingsError(f"--settings: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from exc
        if not isinstance(data, dict):
            raise SettingsError("--settings: must be a JSON object")
        unknown = sorted(set(data) - FILE_KEYS - USER_ONLY_KEYS)
        if unknown:
            known = ", ".join(sorted(FILE_KEYS | USER_ONLY_KEYS))
            raise SettingsError(f"--settings: unknown setting(s) {', '.join(unknown)}; known: {known}")
        try:
            Settings.model_validate(data)
        except ValidationError as exc:
            raise SettingsError(f"--settings: {_describe(exc)}") from exc
        return data
    path = (cwd / Path(stripped).expanduser()) if stripped else cwd
    if not path.is_file():
        raise SettingsError(f"--settings: {stripped!r} is neither a JSON object nor a settings file")
    return read_settings_file(path, user=True)


def _describe(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if key == "credential_env" and isinstance(value, list) and isinstance(merged.get(key), list):
            merged[key] = [*merged[key], *value]  # names add up: either file may keep one from commands
        elif key in ("mcp_servers", "project_mcp_servers") and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        elif key in ("hooks", "project_hooks") and isinstance(value, dict) and isinstance(merged.get(key), dict):
            # Hooks add up across files, event by event.
            merged[key] = {e: [*merged[key].get(e, []), *value.get(e, [])] for e in {*merged[key], *value}}
        elif key == "sandbox" and isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}  # key by key: a project may add a port, not drop the rest
        elif key == "permissions" and isinstance(value, dict) and isinstance(merged.get(key), dict):
            # Rules add up across files; deny beats allow when they are checked.
            merged[key] = {
                kind: list(merged[key].get(kind, [])) + list(value.get(kind, [])) for kind in ("allow", "deny")
            }
        else:
            merged[key] = value
    return merged


def load_settings(
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    trusted: bool | None = None,
    sources: frozenset[str] | None = None,
    flag_settings: Mapping[str, Any] | None = None,
) -> Settings:
    """`trusted` says whether the project's own allow rules apply; None asks the trust store in the home.
    `sources`: the files read (`user`, `project`; `local` counts as `project`), None for both.
    `flag_settings`: `--settings`, over the files and under the environment and the other flags."""
    env = os.environ if env is None else env
    home = home_from_env(env)
    user_file, project_file = settings_files(cwd, env)
    data: dict[str, Any] = {}
    if sources is None or "user" in sources:
        data = _merge(data, read_settings_file(user_file, user=True))
    status = WorkspaceTrust(home).status(cwd) if trusted is None else TrustStatus(trusted)
    is_trusted = status.trusted
    unknown: list[str] = []
    reads_project = sources is None or bool(sources & {"project", "local"})
    project = read_settings_file(project_file, ignored=None if is_trusted else unknown) if reads_project else {}
    if "mcp_servers" in project:
        project["project_mcp_servers"] = project.pop("mcp_servers")
    if "hooks" in project:
        project["project_hooks"] = project.pop("hooks")
    project_allow = list(project.get("permissions", {}).get("allow", []))
    withheld: dict[str, Any] = {}
    if not is_trusted:
        if project_allow:
            project = {**project, "permissions": {"deny": project["permissions"].get("deny", [])}}
            data["untrusted_allow"] = project_allow
        withheld = {key: project.pop(key) for key in sorted(set(project) - TRUST_FREE_KEYS)}
    data = _merge(data, project)
    data = _merge(data, dict(flag_settings or {}))
    settings = _finish(data, home=home, trusted=is_trusted, env=env, overrides=overrides)
    if not is_trusted:
        update = {"trust_changes": list(status.changes), "grant_digests": status.files, "unknown_held_back": unknown}
        settings = settings.model_copy(update=update)
    if not withheld:
        return settings
    # What those keys would make of the settings once trusted (the environment and flags still win).
    would_be = _finish(_merge(data, withheld), home=home, trusted=is_trusted, env=env, overrides=overrides)
    held = {key: getattr(would_be, key) for key in withheld if getattr(would_be, key) != getattr(settings, key)}
    return settings.model_copy(update={"held_back": held})


def _finish(
    data: dict[str, Any], *, home: Path, trusted: bool, env: Mapping[str, str], overrides: Mapping[str, Any] | None
) -> Settings:
    """The files' merged data with the environment and the flags on top, validated."""
    data = dict(data)
    data["home"] = home
    data["project_trusted"] = trusted
    names = credential_names(data.get("credential_env") or [])
    data["credentials"] = {
        name: value for name, value in sorted(env.items()) if value and (name in names or looks_like_credential(name))
    }
    if env.get("ANTHROPIC_API_KEY"):
        data["api_key"] = env["ANTHROPIC_API_KEY"]
    if env.get("ANTHROPIC_AUTH_TOKEN"):
        data["auth_token"] = env["ANTHROPIC_AUTH_TOKEN"]
    if env.get("ANTHROPIC_BASE_URL"):
        data["base_url"] = env["ANTHROPIC_BASE_URL"]
    if env.get("ANTHROPIC_MODEL"):
        data["model"] = env["ANTHROPIC_MODEL"]
    if env.get("AGENT_REPL_CONTEXT_WINDOW"):
        try:
            data["context_window"] = int(env["AGENT_REPL_CONTEXT_WINDOW"])
        except ValueError as exc:
            raise SettingsError(
                f"AGENT_REPL_CONTEXT_WINDOW must be a whole number of tokens, got {env['AGENT_REPL_CONTEXT_WINDOW']!r}"
            ) from exc
    if env.get("AGENT_REPL_STREAM_IDLE_TIMEOUT"):
        try:
            data["stream_idle_timeout"] = float(env["AGENT_REPL_STREAM_IDLE_TIMEOUT"])
        except ValueError as exc:
            raise SettingsError(
                "AGENT_REPL_STREAM_IDLE_TIMEOUT must be a number of seconds, "
                f"got {env['AGENT_REPL_STREAM_IDLE_TIMEOUT']!r}"
            ) from exc
    for variable, key in (("MCP_TIMEOUT", "mcp_startup_timeout"), ("MCP_TOOL_TIMEOUT", "mcp_tool_timeout")):
        if env.get(variable):
            # Claude Code's variables, in milliseconds.
            try:
                data[key] = float(env[variable]) / 1000
            except ValueError as exc:
                raise SettingsError(f"{variable} must be a number of milliseconds, got {env[variable]!r}") from exc
    if env.get("DISABLE_AUTO_COMPACT") or env.get("AGENT_REPL_DISABLE_AUTOCOMPACT"):
        data["autocompact"] = False
    if env.get("AGENT_REPL_EFFORT"):
        data["effort"] = env["AGENT_REPL_EFFORT"].strip()
    if env.get("AGENT_REPL_DISABLE_WEB_TOOLS"):
        data["web_tools"] = False
    if env.get("AGENT_REPL_CONTEXT_STRATEGY"):
        data["context_strategy"] = env["AGENT_REPL_CONTEXT_STRATEGY"].strip()
    for key, value in (overrides or {}).items():
        if value is not None:
            data = _merge(data, {key: value})
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise SettingsError(f"settings: {_describe(exc)}") from exc


def trust_project(settings: Settings, cwd: Path) -> tuple[Settings, str | None]:
    """The user trusted the folder: remember it and let the held-back allow rules and settings (and
    the folder's MCP servers, hooks and agents) take effect.

    The second value is why it could not be remembered (the rules still apply for this run).
    """
    try:
        WorkspaceTrust(settings.home).trust(cwd, settings.grant_digests)
        problem = None
    except TrustError as exc:
        problem = str(exc)
    permissions = settings.permissions.model_copy(
        update={"allow": [*settings.permissions.allow, *settings.untrusted_allow]}
    )
    update = {**settings.held_back, "permissions": permissions, "untrusted_allow": [], "held_back": {},
              "trust_changes": [], "grant_digests": None, "unknown_held_back": [],
              "project_trusted": True}  # fmt: skip
    return settings.model_copy(update=update), problem
