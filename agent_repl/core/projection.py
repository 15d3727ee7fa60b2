"""The seam between the query loop and the context pipeline.

The loop asks a `Projector` for the model's view of the history each turn; the pipeline in
`agent_repl.context` implements it. `/context` asks the same projector with `dry_run=True`,
which must have no side effects (no records written, no model call).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_repl.core.messages import Message


@dataclass(frozen=True)
class StageReport:
    stage: str
    tokens_before: int
    tokens_after: int
    items: int = 0
    detail: str = ""


@dataclass
class Projection:
    view: list[Message]
    wire: list[dict[str, Any]]
    estimated_tokens: int
    reports: list[StageReport] = field(default_factory=list)


class Projector(Protocol):
    def project(self, history: list[Message], *, dry_run: bool = False) -> Projection: ...
