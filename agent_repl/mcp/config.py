"""Which MCP servers a session starts: the user's settings, the project's `.mcp.json` and settings.

A project's servers run commands the repository chose, so they start only in a trusted folder;
the user's own servers always may. Later sources win by name: user settings, `.mcp.json`, then
the project's settings file. A broken `.mcp.json` or entry is reported and skipped; the session
starts without it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import TypeAdapter, ValidationError

from agent_repl.core.config.settings import Settings
from agent_repl.core.model.mcp_config import McpHttpServer, McpServerConfig, McpStdioServer
from agent_repl.core.permissions.credentials import child_environment, credential_names

MCP_JSON = ".mcp.json"
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_SERVER = TypeAdapter(McpServerConfig)

Scope = Literal["user", "project"]


class McpConfigError(ValueError):
    """A server's configuration cannot be used; the message says why."""


@dataclass(frozen=True)
class McpServerSpec:
    name: str
    config: McpStdioServer | McpHttpServer
    scope: Scope
    # The file the entry came from, for messages and /mcp.
    source: str
    # False for a project's server in a folder that is not trusted: it is listed, never started.
    allowed: bool = True


def project_servers_trusted(settings: Settings) -> bool:
    """Whether the project's own servers may start (they run whatever the repository configures):
    in a folder the user trusts (agent_repl.core.config.trust) or for a run with `--trust-project`.
    Skipping the permission checks is not trust: a server starts without any model asking."""
    return settings.project_trusted


def held_back_servers(settings: Settings, cwd: Path) -> list[str]:
    """What the trust question lists: the project's servers that wait for the folder's trust."""
    specs, _ = configured_servers(settings, cwd)
    return [f"MCP server {s.name!r} ({Path(s.source).name})" for s in specs if not s.allowed]


def server_environment(environ: Mapping[str, str], scrubbed: frozenset[str]) -> dict[str, str]:
    """The environment a stdio server starts from: the agent's, without the agent's credentials."""
    return child_environment(scrubbed | credential_names(), environ)


def _read_mcp_json(path: Path) -> tuple[dict[str, McpStdioServer | McpHttpServer], list[str]]:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [f"{path}: cannot read it ({exc}); its MCP servers were not started"]
    try:
        data = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        return {}, [f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                    "its MCP servers were not started"]
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return {}, [f'{path}: expected {{"mcpServers": {{"name": {{...}}}}}}; its MCP servers were not started']
    parsed: dict[str, McpStdioServer | McpHttpServer] = {}
    problems: list[str] = []
    for name, entry in servers.items():
        try:
            parsed[name] = _SERVER.validate_python(entry)
        except ValidationError as exc:
            what = "; ".join(f"{'.'.join(str(p) for p in e['loc'][1:]) or 'entry'}: {e['msg']}" for e in exc.errors())
            problems.append(f"{path}: MCP server {name!r} was not started: {what}")
    return parsed, problems


def read_mcp_config_flag(texts: list[str], cwd: Path) -> tuple[dict[str, McpStdioServer | McpHttpServer], list[str]]:
    """`--mcp-config`: each a JSON object `{"mcpServers": {...}}` or the path of a file holding one.
    Returns the servers to start and the names of those an SDK host runs itself (`"type": "sdk"`).
    Raises McpConfigError naming what is wrong: a flag the user typed is never half applied."""
    servers: dict[str, McpStdioServer | McpHttpServer] = {}
    sdk: list[str] = []
    for text in texts:
        stripped = text.strip()
        where = "--mcp-config"
        if not stripped.startswith("{"):
            path = cwd / Path(stripped).expanduser()
            where = f"--mcp-config {stripped}"
            try:
                stripped = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise McpConfigError(f"{where}: neither a JSON object nor a readable file ({exc})") from None
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise McpConfigError(f"{where}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
        entries = data.get("mcpServers") if isinstance(data, dict) else None
        if not isinstance(entries, dict):
            raise McpConfigError(f'{where}: expected {{"mcpServers": {{"name": {{...}}}}}}')
        for name, entry in entries.items():
            if isinstance(entry, dict) and entry.get("type") == "sdk":
                sdk.append(name)
                continue
            try:
                servers[name] = _SERVER.validate_python(entry)
            except ValidationError as exc:
                what = "; ".join(f"{'.'.join(str(p) for p in e['loc'][1:]) or 'entry'}: {e['msg']}" for e in exc.errors())
                raise McpConfigError(f"{where}: MCP server {name!r}: {what}") from None
    return servers, sdk


def configured_servers(settings: Settings, cwd: Path) -> tuple[list[McpServerSpec], list[str]]:
    """Every configured server, sorted by name, and the problems met reading them."""
    mcp_json = cwd / MCP_JSON
    project_file = cwd / ".agent_repl" / "settings.json"
    from_json, problems = _read_mcp_json(mcp_json)
    trusted = project_servers_trusted(settings)
    specs: dict[str, McpServerSpec] = {}
    sources: list[tuple[Mapping[str, McpStdioServer | McpHttpServer], Scope, Path | str]] = [
        (settings.mcp_servers, "user", settings.home / "settings.json"),
        (from_json, "project", mcp_json),
        (settings.project_mcp_servers, "project", project_file),
    ]
    if settings.strict_mcp_config:
        sources, problems = [], []
    sources.append((settings.flag_mcp_servers, "user", "--mcp-config"))
    for servers, scope, source in sources:
        for name, config in servers.items():
            specs[name] = McpServerSpec(name, config, scope, str(source), allowed=scope == "user" or trusted)
    # Servers held back for trust are not problems: the trust question and print mode's one
    # warning line name them (agent_repl.bootstrap.held_back_grants).
    return [specs[name] for name in sorted(specs)], problems


def expand(value: str, environ: Mapping[str, str], scrubbed: frozenset[str] = frozenset()) -> str:
    """`${VAR}` and `${VAR:-default}` from `environ`; a missing variable without a default is an
    error, and so is one of the agent's own credentials (`scrubbed`)."""

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in scrubbed or name in credential_names():
            raise McpConfigError(f"refuses to pass the agent's own credential ${{{name}}} to an MCP server")
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise McpConfigError(f"needs the environment variable {name}, which is not set")

    return _VARIABLE.sub(substitute, value)


def expanded(
    config: McpStdioServer | McpHttpServer, environ: Mapping[str, str], scrubbed: frozenset[str] = frozenset()
) -> McpStdioServer | McpHttpServer:
    def each(value: str) -> str:
        return expand(value, environ, scrubbed)

    if isinstance(config, McpStdioServer):
        return McpStdioServer(
            command=each(config.command),
            args=[each(a) for a in config.args],
            env={k: each(v) for k, v in config.env.items()},
        )
    return McpHttpServer(type="http", url=each(config.url), headers={k: each(v) for k, v in config.headers.items()})
