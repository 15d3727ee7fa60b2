"""/doctor: is this installation healthy? Each check says ok, warn or fail, and what it saw.

Nothing here changes anything or reaches the network: the endpoint is named, not called, and the
key is judged by its shape only (its value is never shown).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agent_repl.commands.registry import CommandContext
from agent_repl.commands.results import CommandResult, DoctorCheck, DoctorReport
from agent_repl.core.config.settings import SettingsError, read_settings_file
from agent_repl.core.permissions.credentials import settings_files

KEY_PREFIX = "sk-ant-"


def _python() -> DoctorCheck:
    version = sys.version.split()[0]
    if sys.prefix == sys.base_prefix:
        return DoctorCheck("python", "warn", f"Python {version}, not in a virtual environment ({sys.prefix})")
    return DoctorCheck("python", "ok", f"Python {version} in the virtual environment {sys.prefix}")


def _ripgrep() -> DoctorCheck:
    from agent_repl.tools.grep import find_rg

    rg = find_rg()
    if rg is None:
        return DoctorCheck("ripgrep", "fail", "rg was not found: Grep and Glob cannot search (pip install ripgrep)")
    try:
        done = subprocess.run([rg, "--version"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return DoctorCheck("ripgrep", "fail", f"{rg} does not run: {exc}")
    first = (done.stdout.splitlines() or ["?"])[0]
    return DoctorCheck("ripgrep", "ok" if done.returncode == 0 else "fail", f"{first} ({rg})")


def _tree_sitter() -> DoctorCheck:
    try:
        from agent_repl.core.permissions.shell_syntax import parse_line

        parse_line("echo ok | wc -c")
    except Exception as exc:  # any failure here means commands cannot be parsed before rules decide
        return DoctorCheck(
            "tree-sitter", "fail", f"the Bash grammar does not load ({type(exc).__name__}: {exc}); every command will ask"
        )
    return DoctorCheck("tree-sitter", "ok", "the Bash grammar parses commands for the permission rules")


def _sandbox(ctx: CommandContext) -> DoctorCheck:
    sandbox = ctx.session.sandbox
    line = sandbox.status_line()
    if not sandbox.system.active:
        return DoctorCheck("sandbox", "warn", line)
    return DoctorCheck("sandbox", "ok" if sandbox.active else "warn", line)


def _endpoint(ctx: CommandContext) -> list[DoctorCheck]:
    settings = ctx.session.settings
    url = settings.base_url or "https://api.anthropic.com"
    endpoint = DoctorCheck("endpoint", "ok", url + ("" if settings.base_url else " (the default)"))
    key = settings.api_key or os.environ.get("ANTHROPIC_API_KEY") or ""
    if settings.api_key_helper:
        return [endpoint, DoctorCheck("API key", "ok", f"from the helper command {settings.api_key_helper!r}")]
    if not key:
        local = settings.base_url is not None and any(h in settings.base_url for h in ("127.0.0.1", "localhost"))
        detail = "none set" + (" (a local endpoint may not need one)" if local else ": set ANTHROPIC_API_KEY")
        return [endpoint, DoctorCheck("API key", "warn" if local else "fail", detail)]
    if key.strip() != key or not key.startswith(KEY_PREFIX):
        shape = "has spaces around it" if key.strip() != key else f"does not start with {KEY_PREFIX}"
        return [endpoint, DoctorCheck("API key", "warn", f"set ({len(key)} characters) but {shape}")]
    return [endpoint, DoctorCheck("API key", "ok", f"set ({len(key)} characters, {KEY_PREFIX}…)")]


def _settings_files(ctx: CommandContext) -> list[DoctorCheck]:
    user_file, project_file = settings_files(ctx.session.cwd, os.environ | {"AGENT_REPL_HOME": str(ctx.session.settings.home)})
    checks = []
    for label, path, user in (("user settings", user_file, True), ("project settings", project_file, False)):
        if not os.path.lexists(path):
            checks.append(DoctorCheck(label, "ok", f"{path} (none)"))
            continue
        try:
            read_settings_file(Path(path), user=user, ignored=None if user else [])
        except SettingsError as exc:
            checks.append(DoctorCheck(label, "fail", str(exc)))
        else:
            checks.append(DoctorCheck(label, "ok", str(path)))
    return checks


def _store(ctx: CommandContext) -> DoctorCheck:
    home = ctx.session.settings.home
    if home.is_dir() and os.access(home, os.W_OK):
        return DoctorCheck("agent home", "ok", f"{home} (transcripts, settings, trust)")
    if not home.exists():
        return DoctorCheck("agent home", "warn", f"{home} does not exist yet (it is made on the first write)")
    return DoctorCheck("agent home", "fail", f"{home} is not a writable folder: sessions cannot be saved")


async def doctor_command(ctx: CommandContext, args: str) -> CommandResult:
    from agent_repl import __version__

    checks = [
        DoctorCheck("agent-repl", "ok", f"{__version__} ({Path(__file__).resolve().parents[1]})"),
        _python(),
        _ripgrep(),
        _tree_sitter(),
        _sandbox(ctx),
        *_endpoint(ctx),
        *_settings_files(ctx),
        _store(ctx),
    ]
    return DoctorReport(checks)
