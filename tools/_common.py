"""Small helpers the built-in tools share: the args base model, paths, progress callbacks."""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agent_repl.core.tooling.background import BackgroundShell, BackgroundShells
from agent_repl.core.tooling.display import ToolDisplay, plural, structured_dict
from agent_repl.core.tooling.tool import ToolContext, ToolOutput


def _clean_schema(schema: dict[str, Any]) -> None:
    """Drop pydantic's per-field titles and fold `X | None` into `X`: the API sees a plain schema."""
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
        any_of = prop.get("anyOf")
        if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of:
            other = next(s for s in any_of if s != {"type": "null"})
            del prop["anyOf"]
            prop.update(other)
        if prop.get("default", 0) is None:
            del prop["default"]


class ToolArgs(BaseModel):
    """Base for tool input models: unknown keys are refused, aliases (`-i`) and names both accepted."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, json_schema_extra=_clean_schema)


class FoundDisplay(ToolDisplay):
    """Grep and Glob: how many files (or, for Grep's content mode, lines) were found."""

    def summary(self, tool_input: Mapping[str, Any], structured: Any) -> str | None:
        info = structured_dict(structured)
        if "numFiles" not in info:
            return None
        if info.get("mode") == "content":
            return f"Found {plural(info.get('numLines', 0), 'line')}"
        return f"Found {plural(info['numFiles'], 'file')}"


def current_cwd(ctx: ToolContext) -> Path:
    """The session's working directory: Bash's last `cd` if that directory still exists, else ctx.cwd."""
    cwd = ctx.state.get("cwd")
    if cwd and Path(cwd).is_dir():
        return Path(cwd)
    return ctx.cwd


def resolve_path(ctx: ToolContext, path: str | None) -> Path:
    """An optional user path made absolute against the session's working directory."""
    base = current_cwd(ctx)
    if not path:
        return base
    return Path(os.path.normpath(base / os.path.expanduser(path)))


def display_path(path: Path | str, cwd: Path) -> str:
    """A path relative to `cwd` when it lies inside it, else absolute (shorter output, as CC does)."""
    text = str(path)
    try:
        rel = os.path.relpath(text, cwd)
    except ValueError:
        return text
    return text if rel == ".." or rel.startswith(".." + os.sep) else rel


async def notify(ctx: ToolContext, text: str) -> None:
    """Send progress text to the UI; a failing callback never breaks the tool."""
    if ctx.on_progress is None:
        return
    try:
        result = ctx.on_progress(text)
        if inspect.isawaitable(result):
            await result
    except Exception:  # noqa: BLE001 - a UI hook must not fail a running command
        pass


def background_shell(ctx: ToolContext, shell_id: str) -> tuple[BackgroundShells, BackgroundShell] | ToolOutput:
    """The session's background commands and the one named `shell_id` (BashOutput, KillShell), or
    the error to answer."""
    shells = ctx.ports.shells
    if shells is None:
        return ToolOutput.error("Error: background commands are not available in this session.")
    shell = shells.get(shell_id)
    if shell is None:
        return ToolOutput.error(f"Error: no background shell {shell_id!r}. Known: {shells.known_ids()}")
    return shells, shell
