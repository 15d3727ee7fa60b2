"""/config: the settings a user changes by hand, shown with where each value comes from, and
changed in place.

`/config` lists them; `/config KEY` shows one; `/config KEY VALUE` saves it to the user's settings
file (`--project`: the project's, which stays trusted), checked as the file would be checked when
a session starts; `/config KEY --unset` takes it out again. The value is JSON where it parses as
JSON (`true`, `12000`, `null`), a string otherwise. Keys that every request reads again apply to
this session at once; the others apply from the next session (`/clear` starts one).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agent_repl.commands.allow_rules import (
    AllowRuleError,
    project_settings_path,
    write_project_settings,
    write_settings_file,
)
from agent_repl.commands.registry import CommandContext
from agent_repl.commands.results import CommandResult, ConfigReport, ConfigRow, TextOutput
from agent_repl.core.config.settings import Settings, SettingsError, read_settings_file

# Plain values a user sets by hand; lists, tables, hooks and servers have their own commands
# (/permissions, /mcp, /hooks) or are edited in the file.
EDITABLE = (
    "model",
    "fallback_model",
    "effort",
    "thinking",
    "thinking_display",
    "max_output_tokens",
    "context_window",
    "autocompact",
    "context_strategy",
    "api_compaction",
    "compact_file_list",
    "permission_mode",
    "web_tools",
    "tool_search",
    "max_retries",
    "stream_idle_timeout",
)
# Read from the session's settings on every request: a change applies to the next one.
LIVE = frozenset(
    {"model", "effort", "thinking", "thinking_display", "max_output_tokens", "api_compaction", "fallback_model", "web_tools"}
)
UNSET = "--unset"
PROJECT_FLAG = "--project"


def _file_data(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError:
        return {}
    try:
        data = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def _show(value: Any) -> str:
    return "(unset)" if value is None else json.dumps(value) if not isinstance(value, str) else value


def _rows(ctx: CommandContext, keys: tuple[str, ...]) -> list[ConfigRow]:
    session = ctx.session
    user = _file_data(session.settings.home / "settings.json")
    project = _file_data(project_settings_path(session.cwd))
    rows = []
    for key in keys:
        value = session.model if key == "model" else getattr(session.settings, key)
        source = "project file" if key in project else "user file" if key in user else "default"
        if key == "model" and session.model != session.settings.model:
            source = "this session (/model)"
        rows.append(ConfigRow(key, _show(value), source))
    return rows


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


async def config_command(ctx: CommandContext, args: str) -> CommandResult:
    words = args.split()
    where_project = PROJECT_FLAG in words
    words = [w for w in words if w != PROJECT_FLAG]
    if not words:
        return ConfigReport(_rows(ctx, EDITABLE), user_file=str(ctx.session.settings.home / "settings.json"))
    key, rest = words[0], " ".join(words[1:])
    if key not in EDITABLE:
        return TextOutput(f"/config: {key!r} is not a setting /config changes; one of: {', '.join(EDITABLE)}", level="error")
    if not rest:
        return ConfigReport(_rows(ctx, (key,)), user_file=str(ctx.session.settings.home / "settings.json"))
    path = project_settings_path(ctx.session.cwd) if where_project else ctx.session.settings.home / "settings.json"
    return await _change(ctx, path, key, None if rest == UNSET else _parse_value(rest), project=where_project)


async def _change(ctx: CommandContext, path: Path, key: str, value: Any, *, project: bool) -> CommandResult:
    session = ctx.session
    if os.path.lexists(path) and not path.is_file():
        return TextOutput(f"cannot write {path}: it is not a regular file", level="error")
    try:
        current = read_settings_file(path, user=not project)
    except SettingsError as exc:
        return TextOutput(f"{exc} (fix the file first; nothing was changed)", level="error")
    data = _file_data(path) if current else {}
    if value is None:
        data.pop(key, None)
    else:
        data[key] = value
    try:
        Settings.model_validate({k: v for k, v in data.items() if k == key})
    except ValueError as exc:
        reason = str(exc).splitlines()[-2].strip() if len(str(exc).splitlines()) > 1 else str(exc)
        return TextOutput(f"/config {key}: {_show(value)} is not accepted ({reason}); nothing was changed", level="error")
    try:
        if project:
            write_project_settings(session.cwd, path, data)
        else:
            write_settings_file(path, data)
    except AllowRuleError as exc:
        return TextOutput(str(exc).replace("; rule", "; setting"), level="error")
    applied = _apply(ctx, key, value)
    shown = "removed" if value is None else f"= {_show(value)}"
    return TextOutput(f"{key} {shown} (saved to {path}); {applied}")


def _apply(ctx: CommandContext, key: str, value: Any) -> str:
    session = ctx.session
    if key not in LIVE:
        return "applies from the next session (/clear starts one)"
    value = Settings.model_fields[key].default if value is None else value
    if key == "model":
        session.model = value
    else:
        session.apply_settings(**{key: value})
    return "applies from the next request"
