"""Installed without the `emulator` extra, offline mode stops with a one-line reason."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# uvicorn and starlette missing: a None entry in sys.modules makes their import fail as if absent.
WITHOUT_SERVER = """
import sys
sys.modules["uvicorn"] = None
sys.modules["starlette"] = None
from agent_repl.entry import main
sys.argv = ["agent-repl", "-p", "hello"]
sys.exit(main())
"""


def test_offline_mode_without_the_emulator_extra_says_what_to_install(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    env["HOME"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_SERVER],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    # Both are missing; which one the server's import reaches first is the import order's business.
    assert len(lines) == 1 and lines[0] in [
        "agent-repl: offline mode needs the emulator's server, and "
        f"{name} is not installed: install agent-repl[emulator], or set ANTHROPIC_API_KEY to talk to Claude"
        for name in ("uvicorn", "starlette")
    ], lines
    assert "Traceback" not in result.stderr
