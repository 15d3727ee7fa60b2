"""Print mode's start-up on the offline demo model: what the agent's own process loads, and the
emulator it starts in a process of its own (docs/architecture.md, sections 6.0 and 10)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

from .conftest import ROOT

# Loaded at exit by `agent-repl -p ...`: the top-level packages of sys.modules.
_RUN_AND_LIST_MODULES = """
import atexit, sys
atexit.register(lambda: print("MODULES " + " ".join(sorted(sys.modules)), file=sys.stderr))
sys.argv = ["agent-repl", *sys.argv[1:]]
from agent_repl.entry import main
raise SystemExit(main())
"""
# What print mode never needs on its way to an answer: the SDK (a second and a half to import),
# the full-screen app's libraries, and the emulator's server (it runs in its own process); nor,
# for a prompt that asks for no tool, what only some files or calls need: the cl100k encoder (no
# decision is near a threshold), YAML (front matter), gitignore patterns (a rule naming a path, a
# Glob walk), the shell parser behind the Bash permission rules, the compaction machinery, the
# models of a hook's input and answer and, with no MCP server configured, the MCP client.
NOT_ON_THE_PRINT_PATH = {"anthropic", "textual", "rich", "prompt_toolkit", "uvicorn", "starlette", "tiktoken", "yaml", "pathspec"}
LOADED_ON_FIRST_USE = {
    "agent_repl.core.permissions.bash_rules",
    "agent_repl.core.permissions.shell_syntax",
    "agent_repl.core.permissions.command_effects",
    "agent_repl.core.sandbox.auto_allow",
    "agent_repl.context.compact",
    "agent_repl.context.compact_api",
    "agent_repl.context.compact_prompt",
    "agent_repl.context.fork",
    "agent_repl.context.shrink",
    "agent_repl.mcp.manager",
    "agent_repl.mcp.connection",
    "agent_repl.mcp.tool",
    "agent_repl.tools.tool_search",
    "agent_repl.core.hooks.payloads",
}


def _offline_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    return {**env, "AGENT_REPL_HOME": str(home), "PYTHONPATH": str(ROOT)}


def _run(args: list[str], project: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _RUN_AND_LIST_MODULES, *args],
        cwd=project, env=_offline_env(home), capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip


def test_print_mode_answers_without_loading_the_sdk_or_a_ui_library(project, home):
    done = _run(["-p", "hi"], project, home)
    assert done.returncode == 0, done.stderr
    assert "offline demo model" in done.stdout
    [line] = [line for line in done.stderr.splitlines() if line.startswith("MODULES ")]
    modules = set(line.split()[1:])
    loaded = {m.split(".")[0] for m in modules}
    assert "agent_repl" in loaded and "httpx2" in loaded
    assert not loaded & NOT_ON_THE_PRINT_PATH
    assert not modules & LOADED_ON_FIRST_USE


def test_an_unknown_model_is_refused_offline_with_the_models_it_has(project, home):
    done = _run(["-p", "hi", "--model", "claude-nonexistent-9"], project, home)
    assert done.returncode == 2
    assert "unknown model 'claude-nonexistent-9'" in done.stderr and "claude-sonnet-5-5" in done.stderr


def test_the_offline_emulator_stops_when_the_agent_exits(project, home):
    done = _run(["-p", "hi"], project, home)
    assert done.returncode == 0, done.stderr
    port = int(re.search(r"a local emulator at http://127\.0\.0\.1:(\d+)", done.stderr).group(1))
    deadline = time.monotonic() + 30  # the emulator quits on its own once its stdin closes
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return
        time.sleep(0.1)
    raise AssertionError(f"the offline emulator still listens on port {port} after the agent exited")
