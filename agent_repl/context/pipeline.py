"""The context pipeline: small stages, cheapest first, then API normalization (SPEC section 3).

Each stage is `apply(view, state, dry_run) -> (view, report)`. A stage that is not needed
returns the view unchanged, so the destructive stages late in the list rarely run. The
history is never rewritten here: stages return new lists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from agent_repl.context.normalize import normalize_for_api
from agent_repl.core.messages import AssistantMessage, Message, SystemMessage, UserMessage
from agent_repl.core.projection import Projection, StageReport
from agent_repl.core.tokens import DEFAULT_CLAUDE_RATIO, estimate_block_tokens


@dataclass
class PipelineState:
    """What stages remember between turns; rebuilt from transcript records on resume."""

    ratio: float = DEFAULT_CLAUDE_RATIO
    # Per-entry token estimates by uuid: entries are immutable once stored, so this never goes stale.
    token_cache: dict[str, int] = field(default_factory=dict)


class Stage(Protocol):
    name: str

    def apply(
        self, view: list[Message], state: PipelineState, *, dry_run: bool
    ) -> tuple[list[Message], StageReport]: ...


def estimate_message_tokens(message: Message, state: PipelineState) -> int:
    cached = state.token_cache.get(message.uuid)
    if cached is not None:
        return cached
    if isinstance(message, SystemMessage):
        tokens = 0
    else:
        blocks = message.content if isinstance(message, AssistantMessage) else message.blocks()
        tokens = sum(estimate_block_tokens(b.model_dump(mode="json"), state.ratio) for b in blocks)
    state.token_cache[message.uuid] = tokens
    return tokens


def estimate_view_tokens(view: list[Message], state: PipelineState) -> int:
    return sum(estimate_message_tokens(m, state) for m in view)


def slice_after_compact_boundary(history: list[Message]) -> list[Message]:
    """Keep the last compact boundary and everything after it (SPEC R3.0.1)."""
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if isinstance(message, SystemMessage) and message.subtype == "compact_boundary":
            return history[index:]
    return list(history)


class Pipeline:
    def __init__(self, stages: list[Stage] | None = None, state: PipelineState | None = None) -> None:
        self.stages: list[Stage] = list(stages or [])
        self.state = state or PipelineState()

    def project(self, history: list[Message], *, dry_run: bool = False) -> Projection:
        view = slice_after_compact_boundary(history)
        reports: list[StageReport] = []
        for stage in self.stages:
            view, report = stage.apply(view, self.state, dry_run=dry_run)
            reports.append(report)
        wire = normalize_for_api(view)
        return Projection(view=view, wire=wire, estimated_tokens=estimate_view_tokens(view, self.state), reports=reports)


def is_user_prompt(message: Message) -> bool:
    return isinstance(message, UserMessage) and not message.is_meta and not message.is_tool_result()
