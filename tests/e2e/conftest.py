"""End-to-end fixtures: the real CLI in a subprocess, the emulator over HTTP as the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer

ROOT = Path(__file__).resolve().parents[2]


class Emulated:
    def __init__(self, server: EmulatorServer) -> None:
        self.server = server

    def message_requests(self) -> list[Any]:
        return [e for e in self.server.recordings.messages if e.status == 200]

    def bodies(self) -> list[dict[str, Any]]:
        return [e.body for e in self.message_requests()]


@pytest.fixture
def emulator() -> Iterator[Any]:
    servers: list[EmulatorServer] = []

    def start(steps: list[dict[str, Any]], **kwargs: Any) -> Emulated:
        server = EmulatorServer(policy=ScriptPolicy({"steps": steps}), summarizer=AgentSummarizer(), **kwargs)
        server.start()
        servers.append(server)
        return Emulated(server)

    yield start
    for server in servers:
        server.stop()


def agent_env(emulated: Emulated, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(
        ANTHROPIC_BASE_URL=emulated.server.base_url,
        ANTHROPIC_API_KEY="sk-ant-test-e2e-key",
        AGENT_REPL_HOME=str(home),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def run_agent(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_repl", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def transcript_files(home: Path) -> list[Path]:
    return sorted((home / "projects").glob("*/*.jsonl"))


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def strip_cache_control(value: Any) -> Any:
    """The request as the cache sees it: breakpoint markers are not part of the prompt."""
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value
