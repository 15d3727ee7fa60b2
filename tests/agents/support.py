"""Helpers for the sub-agent tests: a session on the emulator, and telling its requests apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_repl.bootstrap import open_session
from agent_repl.core.config.settings import Settings, load_settings
from agent_repl.core.model.events import AgentEvent
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer
from agent_repl.session import Session


def emulator(steps: list[dict[str, Any]], agents: list[dict[str, Any]], **kwargs: Any) -> EmulatorServer:
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": steps, "agents": agents}), summarizer=AgentSummarizer(), **kwargs
    )
    server.start()
    return server


def settings_for(server: EmulatorServer, project: Path, home: Path, **overrides: Any) -> Settings:
    env = {"AGENT_REPL_HOME": str(home), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "k"}
    return load_settings(cwd=project, env=env, overrides={"skip_permissions": True, "web_tools": False, **overrides})


async def session_on(server: EmulatorServer, project: Path, home: Path, **overrides: Any) -> Session:
    return await open_session(settings_for(server, project, home, **overrides), project)


async def run(session: Session, prompt: str) -> list[AgentEvent]:
    return [event async for event in session.run_turn(prompt)]


def first_user_text(body: dict[str, Any]) -> str:
    first = next(m for m in body["messages"] if m["role"] == "user")
    content = first["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def bodies(server: EmulatorServer, marker: str | None = None) -> list[dict[str, Any]]:
    """The answered requests of the sub-agent whose prompt holds `marker`, or of the main thread
    (no sub-agent marker given: those holding none of `AGENT-`)."""
    answered = [e.body for e in server.recordings.messages if e.status == 200]
    if marker is None:
        return [b for b in answered if "AGENT-" not in first_user_text(b)]
    return [b for b in answered if marker in first_user_text(b)]


def wire_tool_ids(body: dict[str, Any]) -> set[str]:
    ids = set()
    for message in body["messages"]:
        if isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    ids.add(block["id"])
                elif block.get("type") == "tool_result":
                    ids.add(block["tool_use_id"])
    return ids


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
