"""Helpers for the MCP tests: a session on the emulator, and reading the wire and the transcript."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_repl.bootstrap import open_session
from agent_repl.core.config.settings import Settings, load_settings
from agent_repl.core.model.events import AgentEvent
from agent_repl.emulator.server import EmulatorServer
from agent_repl.session import Session


def settings_for(server: EmulatorServer, project: Path, home: Path, *, trusted: bool = True, **overrides: Any) -> Settings:
    env = {"AGENT_REPL_HOME": str(home), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "k"}
    # The project's own servers start only in a trusted folder (skipping permissions is not trust).
    return load_settings(cwd=project, env=env, overrides={"skip_permissions": True, **overrides}, trusted=trusted)


async def session_on(
    server: EmulatorServer, project: Path, home: Path, *, trusted: bool = True, **overrides: Any
) -> Session:
    return await open_session(settings_for(server, project, home, trusted=trusted, **overrides), project)


async def run(session: Session, prompt: str) -> list[AgentEvent]:
    return [event async for event in session.run_turn(prompt)]


def main_bodies(server: EmulatorServer) -> list[dict[str, Any]]:
    """The bodies of the answered requests, oldest first."""
    return [e.body for e in server.recordings.messages if e.status == 200]


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in body["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def last_result(body: dict[str, Any]) -> dict[str, Any]:
    return tool_results(body)[-1]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in body["tools"]]


def records(session: Session) -> list[dict[str, Any]]:
    path = Path(session.sink.path)  # type: ignore[attr-defined]
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value
