"""Public tools people already run on Claude Code transcripts read ours (run as black boxes).

- claude-code-log (PyPI, in the dev extras) renders our transcript to HTML.
- ccusage (npm) reports the usage of our sessions. It is looked up as $CCUSAGE_BIN, on PATH, or in
  the pytest cache; when absent and npm is present, `ccusage@18` is installed into the pytest
  cache once (the only network use). 18.x is pure JavaScript and runs on Node 20; 19+ need
  Node 22 and 20.x a native binary package.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_repl.transcript.paths import SessionPaths
from agent_repl.transcript.records import SideRecord
from agent_repl.transcript.writer import TranscriptWriter

CCUSAGE_SPEC = "ccusage@18"
SESSION = "9d1c3a52-6b7e-4f80-a1b2-c3d4e5f6a7b8"
CWD = Path("/home/dev/p")


async def write_session(home: Path, items) -> Path:
    paths = SessionPaths(home=home, cwd=CWD, session_id=SESSION)
    async with TranscriptWriter(paths, git_branch="main") as writer:
        for item in items:
            if isinstance(item, SideRecord):
                await writer.append_record(item)
            else:
                await writer.append_message(item)
    return paths.transcript


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "NO_COLOR": "1",
        "LANG": "C.UTF-8",
        **extra,
    }


def claude_code_log() -> str | None:
    beside = Path(sys.executable).with_name("claude-code-log")
    return str(beside) if beside.exists() else shutil.which("claude-code-log")


async def test_claude_code_log_renders_our_transcript(tmp_path, session_items):
    prompt = session_items[0].content
    exe = claude_code_log()
    if exe is None:
        pytest.skip("claude-code-log is not installed (it is in the dev extras: pip install -e '.[dev]')")
    transcript = await write_session(tmp_path / "home", session_items)
    out = tmp_path / "out.html"
    done = await asyncio.to_thread(
        subprocess.run,
        [exe, str(transcript), "-o", str(out), "--depth", "hook"],
        capture_output=True,
        text=True,
        timeout=300,
        env=clean_env(tmp_path, GIT_PYTHON_REFRESH="quiet"),  # it imports GitPython, which wants git
        cwd=tmp_path,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    for problem in ("validation error", "Unexpected error", "Traceback", "JSON decode error"):
        assert problem not in output, output
    html = out.read_text(encoding="utf-8")
    for text in (
        prompt,
        "Conversation compacted",
        "wc -l notes.txt",
        "You&#x27;re welcome",
        "Context microcompacted",
    ):
        assert text in html or text.replace("&#x27;", "'") in html, text
    # Our side records carry no uuid, so claude-code-log skips them with a one-line notice.
    skipped = set(re.findall(r"unrecognized message type '([a-z-]+)'", output))
    assert skipped <= {"session-meta", "content-replacement", "snip", "collapse-commit", "collapse-stage", "token-ratio", "token-counts", "microcompact-clear", "cache-edit", "server-clear", "compaction-undo", "rewind", "session-memory"}


def _works(exe: str) -> bool:
    try:
        done = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def find_or_install_ccusage(cache_dir: Path) -> tuple[str | None, str]:
    """(path to a working ccusage, why not)."""
    cached = cache_dir / "node_modules" / ".bin" / "ccusage"
    candidates = [os.environ.get("CCUSAGE_BIN"), shutil.which("ccusage"), str(cached)]
    for exe in candidates:
        if exe and Path(exe).exists() and _works(exe):
            return exe, ""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return None, "ccusage not found and node/npm are not installed"
    try:
        done = subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(cache_dir),
                CCUSAGE_SPEC,
                "--no-audit",
                "--no-fund",
                "--fetch-retries=0",
                "--fetch-timeout=30000",
            ],
            capture_output=True,
            text=True,
            timeout=240,
        )
    except subprocess.TimeoutExpired:
        return None, f"`npm install {CCUSAGE_SPEC}` timed out (offline?)"
    if done.returncode != 0 or not _works(str(cached)):
        return None, f"could not install {CCUSAGE_SPEC}: {(done.stderr or done.stdout).strip()[-300:]}"
    return str(cached), ""


async def test_ccusage_reports_our_usage(tmp_path, session_items, pytestconfig):
    cache = getattr(pytestconfig, "cache", None)  # absent under -p no:cacheprovider
    cache_dir = cache.mkdir("ccusage") if cache is not None else tmp_path / "ccusage"
    exe, why = await asyncio.to_thread(find_or_install_ccusage, cache_dir)
    if exe is None:
        pytest.skip(why)
    home = tmp_path / "agent_repl_home"
    await write_session(home, session_items)
    done = await asyncio.to_thread(
        subprocess.run,
        [exe, "session", "--offline", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=clean_env(tmp_path, CLAUDE_CONFIG_DIR=str(home)),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    # One API response is split over several records; ccusage counts it once (message.id + requestId).
    assert report["totals"]["inputTokens"] == 12 * 3 + 3
    assert report["totals"]["outputTokens"] == 96 * 3 + 5
    assert report["totals"]["cacheCreationTokens"] == 4800 * 3
    assert report["totals"]["cacheReadTokens"] == 15000 * 3 + 21000
    (session,) = report["sessions"]
    assert session["modelsUsed"] == ["claude-sonnet-4-5-20250929"] and session["lastActivity"] == "2026-02-03"
