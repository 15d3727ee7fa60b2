"""The query loop's state machine: its `State`, the transitions between passes, and the decisions
its steps return (docs/architecture.md 4.1).

Each pass of the loop ends in a decision: `Retry(transition)` sends the same request again (the
reply was withheld or the request failed), `Continue(transition)` goes round with what the pass
added to the history, `End(reason)` ends the turn. The transition of the decision that started a
pass is its `state.transition`, and the `ContextProjected` event of that pass carries it.

A step is an async generator of events that ends by deciding (`Step.decide`); its caller passes
the events on as they come and then reads `Step.result`.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Concatenate, Generic, ParamSpec, TypeVar

from agent_repl.core.model.events import (
    AgentEvent,
    ContinueTransition,
    RetryTransition,
    Transition,
    TurnEndReason,
)
from agent_repl.core.model.messages import Usage

if TYPE_CHECKING:
    from agent_repl.core.loop.token_budget import TokenBudget

R = TypeVar("R")
P = ParamSpec("P")


@dataclass(frozen=True)
class Retry:
    """Send the same request again: `stream_retry`, `collapse_drain_retry`, `reactive_compact_retry`,
    `max_output_tokens_escalate`, `web_tools_off_retry` or `fallback_model`."""

    transition: RetryTransition


@dataclass(frozen=True)
class Continue:
    """Go round again with what this pass added: `tool_results`, `pause_turn`,
    `max_output_tokens_recovery`, `stop_hook_blocking` or `token_budget_continuation`."""

    transition: ContinueTransition


@dataclass(frozen=True)
class End:
    """End the turn; the loop's one exit yields `TurnEnded` with this reason."""

    reason: TurnEndReason


PassDecision = Retry | Continue | End


@dataclass
class State:
    """Everything one turn carries from one pass of the loop to the next."""

    # The prompt entry that started the turn.
    prompt_uuid: str = ""
    requests: int = 0
    # Why this pass of the loop runs (the decision that ended the one before).
    transition: Transition = "start"
    stream_retries: int = 0
    max_output_tokens_override: int | None = None
    has_attempted_reactive_compact: bool = False
    max_output_recovery_count: int = 0
    pause_continuations: int = 0
    # Right after a compaction the last usage no longer describes the view: skip the blocking check.
    just_compacted: bool = False
    turn_usage: Usage = field(default_factory=Usage)
    final_text: str = ""
    # What the user has seen of the reply being streamed; None once it is stored (or none is coming).
    streamed_text: str | None = None
    # How many times Stop hooks sent the model back this turn (the next run gets `stop_hook_active`).
    stop_hook_blocks: int = 0
    budget: TokenBudget | None = None
    # The fallback model the refused request is sent to once (`fallback_model`); None otherwise.
    refusal_fallback: str | None = None


class Step(Generic[R]):
    """A step's events, to pass on as they come, and then the result it decided on.

        running = some_step(...)
        async for event in running:
            yield event
        running.result
    """

    def __init__(self, body: Callable[[Step[R]], AsyncIterator[AgentEvent]]) -> None:
        self._body: Callable[[Step[R]], AsyncIterator[AgentEvent]] | None = body
        # The decided result, boxed so that None can be one.
        self._decision: tuple[R] | None = None

    def __aiter__(self) -> AsyncIterator[AgentEvent]:
        if self._body is None:
            raise RuntimeError("a step runs once")
        body, self._body = self._body, None
        return aiter(body(self))

    def decide(self, result: R) -> None:
        self._decision = (result,)

    @property
    def result(self) -> R:
        if self._decision is None:
            raise RuntimeError("the step ended without deciding (or its events were not all read)")
        return self._decision[0]

    async def run_to_end(self) -> R:
        """Run the step, dropping its events (what it stored is in the history), for its result."""
        async for _ in self:
            pass
        return self.result


def step(body: Callable[Concatenate[Step[R], P], AsyncIterator[AgentEvent]]) -> Callable[P, Step[R]]:
    """Turn `async def body(out: Step[R], ...)`, which yields events and calls `out.decide`, into a
    function that returns the `Step` to iterate."""

    @functools.wraps(body)
    def start(*args: P.args, **kwargs: P.kwargs) -> Step[R]:
        return Step(lambda out: body(out, *args, **kwargs))

    return start

