"""What a pipeline stage is: `apply(view, state, dry_run) -> StageOutcome`.

A stage returns a new view (never editing the history), the tokens it saved, and, when it
runs for real, the transcript records and history entries its decisions produce. In a dry run
(`/context`) it decides the same way but changes no state and produces nothing to write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_repl.context.state import PipelineState
from agent_repl.core.messages import Message


@dataclass
class StageOutcome:
    view: list[Message]
    saved_tokens: int = 0
    items: int = 0
    detail: str = ""
    records: list[Any] = field(default_factory=list)
    new_messages: list[Message] = field(default_factory=list)
    # Added to the request body (the public context_management edits) and its beta header.
    body_extras: dict[str, Any] = field(default_factory=dict)
    betas: list[str] = field(default_factory=list)


class Stage(Protocol):
    name: str

    def apply(self, view: list[Message], state: PipelineState, *, dry_run: bool) -> StageOutcome: ...
