"""A loop step passes its events on as they come and then has the result it decided on."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent_repl.core.loop.state import End, Retry, Step, step
from agent_repl.core.model.events import AgentEvent, TextDelta


@step
async def _counted(out: Step[Retry | End], words: list[str]) -> AsyncIterator[AgentEvent]:
    for word in words:
        yield TextDelta(text=word)
    out.decide(Retry("stream_retry") if words else End("completed"))


@step
async def _undecided(out: Step[bool]) -> AsyncIterator[AgentEvent]:
    yield TextDelta(text="no decision")


async def test_a_step_streams_its_events_then_has_its_result():
    running = _counted(["a", "b"])
    seen = []
    async for event in running:
        seen.append(event)
        with pytest.raises(RuntimeError):
            _ = running.result  # not decided while its events are still coming
    assert [e.text for e in seen] == ["a", "b"] and running.result == Retry("stream_retry")
    assert await _counted([]).run_to_end() == End("completed")


async def test_a_step_that_never_decides_or_runs_twice_is_an_error():
    running = _undecided()
    with pytest.raises(RuntimeError, match="without deciding"):
        await running.run_to_end()
    with pytest.raises(RuntimeError, match="runs once"):
        [event async for event in running]
