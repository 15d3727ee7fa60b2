"""What a pipeline stage is: `apply(view, state) -> StageOutcome`.

A stage returns a new view (never editing the history), the tokens it saved, the records its
decisions produce and the history entries to show them. It changes the state through its
records alone (`agent_repl.context.records.apply`, which the pipeline runs on each before the
next stage) and its bookkeeping (listed there); anything outside the state, such as a file
written, is an effect the pipeline runs only when the projection is for real. So a dry run
(`/context`) is the same run on a copy of the state.
"""

from __future__ import annotations

from collections.abc import Callable
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
    # Run once the projection is for real, never in a dry run (the budget's files).
    effects: list[Callable[[], object]] = field(default_factory=list)


class Stage(Protocol):
    name: str

    def apply(self, view: list[Message], state: PipelineState) -> StageOutcome: ...
