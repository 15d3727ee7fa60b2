"""Shared helpers for the compaction and recovery tests: an in-process session on the emulator."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import rich

from agent_repl.bootstrap import close_session, find_resume_source, open_session
from agent_repl.core.config.settings import Settings, load_settings
from agent_repl.core.model.events import AgentEvent
from agent_repl.core.model.messages import utc_now
from agent_repl.emulator.server import EmulatorServer
from agent_repl.session import Session

RICH = Path(rich.__file__).parent
RICH_FILES = sorted((p for p in RICH.glob("*.py") if 6_000 < p.stat().st_size < 40_000), key=lambda p: p.name)
SUMMARY_MARKER = "<summary-request>"


class OffsetClock:
    """Now, plus an offset a test moves forward (an idle hour without waiting for it)."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return utc_now() + self.offset


def settings_for(server: EmulatorServer, tmp_path: Path, **overrides: Any) -> Settings:
    env = {"AGENT_REPL_HOME": str(tmp_path / "home"), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "k"}
    return load_settings(cwd=tmp_path, env=env, overrides={"skip_permissions": True, **overrides})


async def run(session: Session, prompt: str) -> list[AgentEvent]:
    return [event async for event in session.run_turn(prompt)]


def is_summary_request(body: dict[str, Any]) -> bool:
    last = [m for m in body["messages"] if m["role"] == "user"][-1]
    return any(b.get("type") == "text" and b["text"].lstrip().startswith(SUMMARY_MARKER) for b in last["content"])


def next_request_bytes(session: Session) -> str:
    projection = session.projector.project(session.messages, dry_run=True)
    return json.dumps(
        {
            "system": session.system_prompt,
            "tools": session.tool_definitions,
            "messages": projection.wire,
            "extras": projection.body_extras,
            "betas": projection.betas,
        }
    )


async def assert_resume_reproduces(session: Session, settings: Settings, cwd: Path) -> None:
    """Closing and resuming gives the same next request, byte for byte, as the live session."""
    expected = next_request_bytes(session)
    await close_session(session)
    source = find_resume_source(settings, cwd, session.session_id, latest=False)
    assert source is not None and source.owned
    resumed = await open_session(settings, cwd, resume=source)
    try:
        resumed.projector.state.config.cache_editing = session.projector.state.config.cache_editing
        assert next_request_bytes(resumed) == expected
    finally:
        await close_session(resumed)
