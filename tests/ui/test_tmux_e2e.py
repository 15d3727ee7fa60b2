"""End to end in a real terminal: `agent-repl` in tmux on the emulator; type, see, /context, exit."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from .tmux import Terminal, open_terminal, unwrapped

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _start(server, home: Path, project: Path, *args: str) -> str:
    """The tmux session name of `agent-repl ARGS` (for the tests that drive tmux by name)."""
    return open_terminal(server.base_url, home, project, *args).name


def _screen(name: str) -> str:
    return Terminal(name, Path(), Path()).screen()


def _wait_for_text(name: str, text: str, timeout: float = 30.0) -> str:
    return Terminal(name, Path(), Path()).wait_for(text, timeout)


def _type(name: str, text: str) -> None:
    Terminal(name, Path(), Path()).type(text)


_unwrapped = unwrapped


def test_type_a_prompt_see_the_answer_run_context_and_exit(emulator, project: Path, home: Path):
    server = emulator([{"text": "The answer is **forty-two**."}])
    term = open_terminal(server.base_url, home, project)
    try:
        term.wait_for("claude-sonnet")  # the status line: the app is up
        term.wait_for("/help lists commands")  # the session is open
        term.type("what is the answer?")
        screen = term.wait_for("forty-two")
        assert "› what is the answer?" in unwrapped(screen)

        term.type("/context")
        # The report is one renderable, but a tall frame reaches tmux in pieces (the pty hands it
        # over a few KB at a time): under a soak's load a capture held the grid's legend without the
        # table below it (soak5 main runs 2 and 3 at 6aa16de). Wait for the whole report.
        term.wait_until(
            lambda screen: "Free space" in unwrapped(screen) and "Largest entries in the view" in unwrapped(screen),
            "the whole /context report",
        )

        term.keys("C-d")
        term.wait_for("AGENT-REPL-EXIT=0")
    finally:
        term.close()

    [transcript] = sorted((home / "projects").glob("*/*.jsonl"))
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    texts = [r["message"]["content"] for r in records if r.get("type") in ("user", "assistant")]
    assert "what is the answer?" in texts
    assert any(isinstance(t, list) and t[0].get("text") == "The answer is **forty-two**." for t in texts)


def test_the_inline_repl_answers_runs_commands_and_exits(emulator, project: Path, home: Path):
    server = emulator([{"text": "Inline answer here."}])
    term = open_terminal(server.base_url, home, project, "--inline")
    try:
        term.wait_for("/help for help")
        term.type("hello inline")
        term.wait_for("Inline answer here.")
        term.type("/cost")
        term.wait_for("cache read")
        term.type("/context")
        term.wait_for("Free space")
        term.type("/exit")
        term.wait_for("AGENT-REPL-EXIT=0")
    finally:
        term.close()


def test_an_mcp_server_is_listed_by_slash_mcp_and_its_tool_is_asked_for_then_runs(emulator, project: Path, home: Path):
    server_script = Path(__file__).resolve().parents[1] / "mcp" / "mcp_test_server.py"
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(
        json.dumps({"mcp_servers": {"demo": {"command": sys.executable, "args": [str(server_script)]}}})
    )
    server = emulator(
        [{"tools": [{"name": "mcp__demo__echo", "input": {"text": "from tmux"}}]}, {"text": "The server echoed it."}]
    )
    term = open_terminal(server.base_url, home, project)
    try:
        term.wait_for("MCP: 1 server (1 connected), 8 tools; /mcp for details")
        term.type("/mcp")
        screen = term.wait_for("mcp__demo__slow")
        assert "demo connected 8 tools user · stdio" in unwrapped(screen)
        term.type("echo it")
        screen = term.wait_for("Allow mcp__demo__echo?")
        assert '{"text":"from tmux"}' in unwrapped(screen)
        term.keys("y")
        term.wait_for("The server echoed it.")
        term.keys("C-d")
        term.wait_for("AGENT-REPL-EXIT=0")
    finally:
        term.close()
    [transcript] = sorted((home / "projects").glob("*/*.jsonl"))
    results = [
        block
        for r in map(json.loads, transcript.read_text().splitlines())
        if r.get("type") == "user" and isinstance(r["message"]["content"], list)
        for block in r["message"]["content"]
        if block.get("type") == "tool_result"
    ]
    assert [b["content"] for b in results] == ["echo: from tmux"]
