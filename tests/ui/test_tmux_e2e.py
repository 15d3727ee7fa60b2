"""End to end in a real terminal: `agent-repl` in tmux on the emulator; type, see, /context, exit."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=10).stdout


def _screen(name: str) -> str:
    return _tmux("capture-pane", "-p", "-t", name)


def _unwrapped(screen: str) -> str:
    """The screen's text with line breaks and runs of spaces as one space: a narrow pane wraps lines."""
    return " ".join(screen.split())


def _wait_for_text(name: str, text: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _screen(name)
        if _unwrapped(text) in _unwrapped(screen):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} did not appear; the screen was:\n{screen}")


def _start(server, home: Path, project: Path, *args: str) -> str:
    name = f"agent-repl-e2e-{uuid.uuid4().hex[:8]}"
    env = {
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-tmux",
        "AGENT_REPL_HOME": str(home),
        "TERM": "xterm-256color",
        "PYTHONUNBUFFERED": "1",
    }
    command = " ".join(
        [
            "env",
            *(f"{k}={shlex.quote(v)}" for k, v in env.items()),
            shlex.quote(sys.executable),
            "-m",
            "agent_repl",
            *args,
        ]
    )
    script = f"{command}; echo AGENT-REPL-EXIT=$?; sleep 30"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", "-c", str(project), script],
        check=True,
        timeout=10,
    )
    # A detached session may start at the server's default size whatever -x/-y said; insist.
    subprocess.run(["tmux", "resize-window", "-t", name, "-x", "120", "-y", "40"], capture_output=True, timeout=10)
    return name


def _type(name: str, text: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", name, "-l", text], check=True, timeout=10)
    subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True, timeout=10)


def test_type_a_prompt_see_the_answer_run_context_and_exit(emulator, project: Path, home: Path):
    server = emulator([{"text": "The answer is **forty-two**."}])
    name = _start(server, home, project)
    try:
        _wait_for_text(name, "claude-sonnet")  # the status line: the app is up
        _wait_for_text(name, "/help lists commands")  # the session is open
        _type(name, "what is the answer?")
        screen = _wait_for_text(name, "forty-two")
        assert "› what is the answer?" in _unwrapped(screen)

        _type(name, "/context")
        screen = _wait_for_text(name, "Free space")
        assert "Largest entries in the view" in _unwrapped(screen)

        subprocess.run(["tmux", "send-keys", "-t", name, "C-d"], check=True, timeout=10)
        _wait_for_text(name, "AGENT-REPL-EXIT=0")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, timeout=10)

    [transcript] = sorted((home / "projects").glob("*/*.jsonl"))
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    texts = [r["message"]["content"] for r in records if r.get("type") in ("user", "assistant")]
    assert "what is the answer?" in texts
    assert any(isinstance(t, list) and t[0].get("text") == "The answer is **forty-two**." for t in texts)


def test_the_inline_repl_answers_runs_commands_and_exits(emulator, project: Path, home: Path):
    server = emulator([{"text": "Inline answer here."}])
    name = _start(server, home, project, "--inline")
    try:
        _wait_for_text(name, "/help for help")
        _type(name, "hello inline")
        _wait_for_text(name, "Inline answer here.")
        _type(name, "/cost")
        _wait_for_text(name, "cache read")
        _type(name, "/context")
        _wait_for_text(name, "Free space")
        _type(name, "/exit")
        _wait_for_text(name, "AGENT-REPL-EXIT=0")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, timeout=10)


def test_an_mcp_server_is_listed_by_slash_mcp_and_its_tool_is_asked_for_then_runs(emulator, project: Path, home: Path):
    server_script = Path(__file__).resolve().parents[1] / "mcp" / "mcp_test_server.py"
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(
        json.dumps({"mcp_servers": {"demo": {"command": sys.executable, "args": [str(server_script)]}}})
    )
    server = emulator(
        [{"tools": [{"name": "mcp__demo__echo", "input": {"text": "from tmux"}}]}, {"text": "The server echoed it."}]
    )
    name = _start(server, home, project)
    try:
        _wait_for_text(name, "MCP: 1 server (1 connected), 8 tools; /mcp for details")
        _type(name, "/mcp")
        screen = _wait_for_text(name, "mcp__demo__slow")
        assert "demo connected 8 tools user · stdio" in _unwrapped(screen)
        _type(name, "echo it")
        screen = _wait_for_text(name, "Allow mcp__demo__echo?")
        assert '{"text":"from tmux"}' in _unwrapped(screen)
        subprocess.run(["tmux", "send-keys", "-t", name, "y"], check=True, timeout=10)
        _wait_for_text(name, "The server echoed it.")
        subprocess.run(["tmux", "send-keys", "-t", name, "C-d"], check=True, timeout=10)
        _wait_for_text(name, "AGENT-REPL-EXIT=0")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, timeout=10)
    [transcript] = sorted((home / "projects").glob("*/*.jsonl"))
    results = [
        block
        for r in map(json.loads, transcript.read_text().splitlines())
        if r.get("type") == "user" and isinstance(r["message"]["content"], list)
        for block in r["message"]["content"]
        if block.get("type") == "tool_result"
    ]
    assert [b["content"] for b in results] == ["echo: from tmux"]
