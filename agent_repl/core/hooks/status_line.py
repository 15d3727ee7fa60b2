"""The user's own status line: the `statusLine` command, given the session as JSON on stdin.

It runs like a hook (in the project, with the agent's environment minus its credentials, in a
process group of its own that is killed when it overstays), and what it prints is redacted. Its
first lines are the status line; a failure, a non-zero exit or no output blank it, as in Claude
Code. Front ends decide when to run it (after a reply, a compaction, a mode change) and draw the
lines, showing every escape but colours.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_repl.core.permissions.credentials import child_environment, credential_names
from agent_repl.core.tooling.redaction import SecretRedactor

STATUS_TIMEOUT_S = 5.0
MAX_STATUS_LINES = 3
MAX_STATUS_BYTES = 64 * 1024
# At most one run this often (Claude Code's pace); a later request waits for the next slot.
MIN_INTERVAL_S = 0.3


@dataclass(frozen=True)
class StatusLineRun:
    lines: list[str]
    # Why the line is blank, for /doctor-like reporting; "" when it ran well.
    problem: str = ""


async def run_status_command(
    command: str,
    payload: bytes,
    *,
    cwd: Path,
    redactor: SecretRedactor,
    scrubbed_env: frozenset[str] = frozenset(),
    limit_s: float = STATUS_TIMEOUT_S,
) -> StatusLineRun:
    env = child_environment(scrubbed_env | credential_names())
    env["CLAUDE_PROJECT_DIR"] = str(cwd)
    try:
        process = await asyncio.create_subprocess_shell(
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        return StatusLineRun([], f"could not start: {exc.strerror or exc}")
    try:
        out, _ = await asyncio.wait_for(process.communicate(payload), timeout=limit_s)
    except TimeoutError:
        _kill(process)
        await process.wait()
        return StatusLineRun([], f"timed out after {limit_s:g} s")
    except asyncio.CancelledError:
        _kill(process)
        raise
    if process.returncode != 0:
        return StatusLineRun([], f"exited with {process.returncode}")
    text = redactor.text(out[:MAX_STATUS_BYTES].decode("utf-8", errors="replace"))
    lines = [line.rstrip("\r") for line in text.splitlines() if line.strip()][:MAX_STATUS_LINES]
    return StatusLineRun(lines, "" if lines else "printed nothing")


def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def status_input(
    *,
    session_id: str,
    transcript_path: str,
    cwd: str,
    model: str,
    version: str,
    permission_mode: str,
    cost_usd: float | None,
    duration_ms: int,
    api_duration_ms: int,
    context_tokens: int,
    context_window: int,
    usage: dict[str, int] | None,
) -> dict[str, Any]:
    """The JSON the command reads, in Claude Code's shape for the fields that mean something here."""
    used = round(100 * context_tokens / context_window) if context_window else None
    return {
        "hook_event_name": "Status",
        "session_id": session_id,
        "transcript_path": transcript_path,
        "cwd": cwd,
        "model": {"id": model, "display_name": model},
        "workspace": {"current_dir": cwd, "project_dir": cwd},
        "version": version,
        "permission_mode": permission_mode,
        "cost": {
            "total_cost_usd": cost_usd,
            "total_duration_ms": duration_ms,
            "total_api_duration_ms": api_duration_ms,
        },
        "context_window": {
            "context_window_size": context_window,
            "used_tokens": context_tokens,
            "used_percentage": used,
            "current_usage": usage,
        },
        "exceeds_200k_tokens": context_tokens > 200_000,
    }
