"""Levers: agent-repl with one thing changed, to show what its difference from Claude Code is made of.

Not product settings. Each changes the session `open_session` built:

- `no session memory`: no session-memory notes (no memory requests; a compaction is always a
  summary request).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from agent_repl.core.tooling.tool import Tool


def no_session_memory(session: Any) -> None:
    session.after_turn_hooks.clear()
    session.memory = None


@dataclasses.dataclass(frozen=True)
class Lever:
    name: str
    tools: Callable[[], list[Tool[Any]]] | None = None
    configure: Callable[[Any], None] | None = None


DEFAULTS = Lever("agent-repl")
LEVERS = (Lever("agent-repl, no session memory", configure=no_session_memory),)
