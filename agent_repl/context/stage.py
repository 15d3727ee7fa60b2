"""The two kinds of step in the flowchart (agent_repl.context.pipeline).

A `Stage` shapes the view: `apply(view, state) -> StageOutcome` returns a new view (never editing
the history), the tokens it saved, the records its decisions produce and the history entries to
show them. It changes the state through its records alone (`agent_repl.context.records.apply`,
which the pipeline runs on each before the next stage) and its bookkeeping (listed there);
anything outside the state, such as a file written, is an effect the pipeline runs only when the
projection is for real. So a dry run (`/context`) is the same run on a copy of the state. A stage
that also marks the wire request, reacts to the API's usage or frees more after a prompt-too-long
error overrides `decorate`, `observe` or `recover`, so all of it lives in its module.

A `Check` runs on the finished view's token count and returns what the loop must do before it
sends: `Compact(trigger)` first, or `Block(message)` instead; None to send as is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_repl.context.normalize import WireDraft
from agent_repl.context.state import PipelineState
from agent_repl.core.loop.projection import Action
from agent_repl.core.model.messages import Message, Usage


@dataclass
class StageOutcome:
    view: list[Message]
    saved_tokens: int = 0
    items: int = 0
    detail: str = ""
    records: list[Any] = field(default_factory=list)
    new_messages: list[Message] = field(default_factory=list)
    # Added to the request body (the public context_management edits; the client names their beta).
    body_extras: dict[str, Any] = field(default_factory=dict)
    # Run once the projection is for real, never in a dry run (the budget's files).
    effects: list[Callable[[], object]] = field(default_factory=list)


class Stage:
    name: str = ""

    def apply(self, view: list[Message], state: PipelineState) -> StageOutcome:
        raise NotImplementedError

    def decorate(self, drafts: list[WireDraft], view: list[Message], state: PipelineState) -> None:
        """Mark the normalized wire messages in place (the client names the betas the marks need)."""

    def observe(self, usage: Usage, cleared_by_server: int, state: PipelineState) -> list[Message]:
        """React to the API's usage for the request just answered; returns history entries to append.
        `cleared_by_server`: the input tokens the request's context_management edits cleared."""
        return []

    def recover(self, view: list[Message], state: PipelineState) -> list[Any]:
        """After a prompt-too-long error, free what this stage can at once (the view is the
        projected one); returns the records it applied, for the caller to write."""
        return []


class Check:
    name: str = ""

    def check(self, tokens: int, state: PipelineState) -> Action | None:
        raise NotImplementedError

    def quiet_below(self, state: PipelineState) -> float:
        """A token count under which `check` returns None whatever the texts of the view count
        (the projector trusts upper bounds of the counts only under every check's); 0 to never
        say."""
        return 0
