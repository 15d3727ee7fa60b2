"""The Claude Agent SDK drives agent-repl (or, as the control, the real Claude Code CLI).

`AGENT_REPL_SDK_CLI=/usr/bin/claude` runs every test here with that CLI as `cli_path`: the
same scenario, the same emulator. What that control run gave is written in each test's
docstring (structural facts only: message types, tool calls, result subtype).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_repl.emulator.server import EmulatorServer

from .scripted import ScriptedModel, Step

pytest.importorskip("claude_agent_sdk")

MODEL = "claude-sonnet-4-5"


def agent_cli() -> str:
    """The program the SDK starts: agent-repl's entry point beside this Python, or the control."""
    return os.environ.get("AGENT_REPL_SDK_CLI") or str(Path(sys.executable).parent / "agent-repl")


class Harness:
    def __init__(self, server: EmulatorServer, model: ScriptedModel, home: Path, cwd: Path) -> None:
        self.server = server
        self.model = model
        self.home = home
        self.cwd = cwd

    def options(self, **kwargs: Any) -> Any:
        from claude_agent_sdk import ClaudeAgentOptions

        env = {
            "ANTHROPIC_BASE_URL": self.server.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-sdk-test-key",
            "HOME": str(self.home),
            "AGENT_REPL_HOME": str(self.home / ".agent_repl"),
            "IS_SANDBOX": "1",
            "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1",
        }
        kwargs.setdefault("model", MODEL)
        return ClaudeAgentOptions(cli_path=agent_cli(), cwd=str(self.cwd), env=env, **kwargs)

    def main_requests(self) -> list[dict[str, Any]]:
        """The bodies of the requests that carried tools (the conversation, not side requests)."""
        return [e.body for e in self.server.recordings.messages if e.status == 200 and e.body.get("tools")]


@pytest.fixture
def sdk(tmp_path: Path) -> Iterator[Any]:
    started: list[EmulatorServer] = []

    def start(scenarios: dict[str, list[Step]]) -> Harness:
        model = ScriptedModel(scenarios)
        server = EmulatorServer(policy=model)
        server.start()
        started.append(server)
        home, cwd = tmp_path / "home", tmp_path / "project"
        home.mkdir(exist_ok=True)
        cwd.mkdir(exist_ok=True)
        return Harness(server, model, home, cwd)

    yield start
    for server in started:
        server.stop()


async def collect(stream: Any) -> list[Any]:
    return [message async for message in stream]


def kinds(messages: list[Any]) -> list[str]:
    """Message class names, with a system message's subtype (`SystemMessage:init`)."""
    return [
        type(m).__name__ + (f":{m.subtype}" if type(m).__name__ == "SystemMessage" else "") for m in messages
    ]


def tool_results(messages: list[Any]) -> list[Any]:
    from claude_agent_sdk import ToolResultBlock, UserMessage

    return [
        b
        for m in messages
        if isinstance(m, UserMessage) and isinstance(m.content, list)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]


def result_text(block: Any) -> str:
    content = block.content
    return content if isinstance(content, str) else "".join(str(c.get("text", "")) for c in content or [])
