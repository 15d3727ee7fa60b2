"""The turn-start compaction decides on the exact estimate when the projection kept an upper bound
of it (agent_repl.core.loop.query.compaction_due_between_turns)."""

from __future__ import annotations

from typing import Any

from agent_repl.core.loop.projection import Projection
from agent_repl.core.loop.query import compaction_due_between_turns

THRESHOLD = 1_000


class SizeCompactor:
    """Compacts from THRESHOLD tokens on, as the session-notes compaction does; notes each ask."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def due_between_turns(self, session: Any, view: list[Any], tokens: int) -> bool:
        self.asked.append(tokens)
        return tokens >= THRESHOLD


class ExactProjector:
    def __init__(self, exact: int) -> None:
        self.exact = exact

    def next_request_tokens(self, history: list[Any]) -> int:
        return self.exact


class Session:
    def __init__(self, exact: int) -> None:
        self.compactor = SizeCompactor()
        self.projector = ExactProjector(exact)
        self.messages: list[Any] = []


def _projection(tokens: int, *, bound: bool) -> Projection:
    return Projection(view=[], wire=[], estimated_tokens=tokens, estimate_is_upper_bound=bound)


def test_an_upper_bound_over_the_size_is_checked_against_the_exact_estimate() -> None:
    session = Session(exact=400)
    assert compaction_due_between_turns(session, _projection(1_600, bound=True)) == (False, 400)  # type: ignore[arg-type]
    assert session.compactor.asked == [1_600, 400]
    session = Session(exact=1_200)
    assert compaction_due_between_turns(session, _projection(1_600, bound=True)) == (True, 1_200)  # type: ignore[arg-type]


def test_an_upper_bound_under_the_size_needs_no_exact_estimate() -> None:
    session = Session(exact=10)
    assert compaction_due_between_turns(session, _projection(900, bound=True)) == (False, 900)  # type: ignore[arg-type]
    assert session.compactor.asked == [900]


def test_an_exact_estimate_decides_alone() -> None:
    session = Session(exact=10)
    assert compaction_due_between_turns(session, _projection(1_600, bound=False)) == (True, 1_600)  # type: ignore[arg-type]
    assert session.compactor.asked == [1_600]
