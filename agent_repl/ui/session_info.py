"""Small facts about a session's history that the status line needs (no UI library)."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agent_repl.core.model.messages import AssistantMessage, Message, Usage

if TYPE_CHECKING:
    from agent_repl.context.state import PipelineState
    from agent_repl.session import Session


def pipeline_state(session: Session) -> PipelineState:
    """The state of the session's context pipeline (every session the front ends open has one)."""
    from agent_repl.context.projector import Pipeline

    pipeline = session.projector
    if not isinstance(pipeline, Pipeline):
        raise TypeError("this session has no context pipeline")
    return pipeline.state


def last_request_usage(messages: list[Message]) -> Usage | None:
    """The usage the API reported for the newest real response, or None before the first one."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.usage is not None and not message.is_synthetic:
            return message.usage
    return None


def resume_hint(session: Session) -> str | None:
    """The line printed on exit that brings this session back, when it has a transcript on disk."""
    path = session.sink.path
    if path is None or not Path(path).is_file() or not any(m.type != "system" for m in session.messages):
        return None
    return f"Resume this session with: {agent_repl_command()} --resume {session.session_id}"


def agent_repl_command(argv0: str | None = None, path_env: str | None = None) -> str:
    """How the user's shell starts this program: `agent-repl` when PATH finds the running one.

    `make run` starts the virtualenv's script, which is usually not on PATH; then the hint names
    that script by its full path so the printed line works when pasted into the shell.
    """
    running = argv0 if argv0 is not None else (sys.argv[0] if sys.argv else "")
    found = shutil.which("agent-repl", path=path_env)
    if running and Path(running).name == "agent-repl" and Path(running).is_file():
        here = Path(running).absolute()
        if found is not None and Path(found).resolve() == here.resolve():
            return "agent-repl"
        return shlex.quote(str(here))
    if found is not None:
        return "agent-repl"
    return f"{shlex.quote(sys.executable)} -m agent_repl"
