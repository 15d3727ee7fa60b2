"""Print mode with a project `.mcp.json`: the CLI in a real process, and text mode's notices."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from agent_repl.bootstrap import close_session
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.print_mode import run_print_mode

from .conftest import stdio_server, write_mcp_json
from .support import last_result, session_on


def run_cli(args: list[str], project: Path, home: Path, server: EmulatorServer) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MCP_"))}
    env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="sk-ant-test-mcp", AGENT_REPL_HOME=str(home))
    return subprocess.run(
        [sys.executable, "-m", "agent_repl", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_the_cli_in_print_mode_uses_the_projects_servers_and_reports_the_one_that_failed(project, home):
    write_mcp_json(project, {"demo": stdio_server(), "missing": {"command": "/nonexistent/mcp-server"}})
    steps = [{"tools": [{"name": "mcp__demo__add", "input": {"a": 20, "b": 22}}]}, {"text": "It is 42."}]
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps}))
    server.start()
    try:
        done = run_cli(
            ["-p", "add them", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "--trust-project"], project, home, server
        )
        assert done.returncode == 0, done.stderr
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        init = lines[0]
        assert init["subtype"] == "init" and "mcp__demo__add" in init["tools"]
        assert init["mcp_servers"] == [{"name": "demo", "status": "connected"}, {"name": "missing", "status": "failed"}]
        # stdout holds only Claude Code's line types; the notice is said once, on stderr.
        assert {line["type"] for line in lines} <= {"system", "assistant", "user", "result"}
        notices = [line for line in done.stderr.splitlines() if "MCP server 'missing'" in line]
        assert len(notices) == 1 and "failed to start: the command was not found" in notices[0]
        assert lines[-1]["result"] == "It is 42."
        bodies = [e.body for e in server.recordings.messages if e.status == 200]
        assert last_result(bodies[1])["content"].startswith("42")
    finally:
        server.stop()


async def test_text_mode_says_each_notice_once_on_stderr(project, home):
    write_mcp_json(project, {"missing": {"command": "/nonexistent/mcp-server"}})
    server = EmulatorServer(policy=ScriptPolicy({"steps": [{"text": "fine"}]}))
    server.start()
    session = await session_on(server, project, home)
    out, err = io.StringIO(), io.StringIO()
    try:
        assert await run_print_mode(session, "hi", out=out, err=err) == 0
    finally:
        await close_session(session)
        server.stop()
    assert out.getvalue() == "fine\n"
    assert err.getvalue().count("\n") == 1
    assert err.getvalue().startswith("agent-repl: MCP server 'missing' failed to start: the command was not found")
