"""Simulated time in the replay: recorded times survive conversion, missing ones are drawn the same
way every time, and the emulator's cache expires on the simulated clock (a pause past 5 minutes
makes the next request write its prefix again, unless it was written for the hour)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from benchmarks.replay.catalogue import claude_code_samples
from benchmarks.replay.convert_claude_code import convert_claude_code
from benchmarks.replay.convert_mini_swe import load_mini_swe
from benchmarks.replay.harness import run_one
from benchmarks.replay.strategies import DIAGNOSTIC_VARIANTS, STRATEGIES
from benchmarks.replay.timeline import GAPS_FILE, GapSamples, Pauses, SimClock, measure_gaps, with_times
from benchmarks.replay.trajectory import Step, ToolCall, Trajectory, Turn, UserText

from .conftest import FIXTURES


def test_the_clock_moves_only_forward_and_reads_the_same_as_seconds_and_datetime():
    clock = SimClock()
    start = clock()
    clock.advance(90.5)
    assert clock() - start == 90.5 and clock.elapsed == 90.5
    assert clock.now().timestamp() == clock()
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_converters_keep_the_recorded_times():
    cc = convert_claude_code(FIXTURES / "claude_code_barebones_head.jsonl", name="cc", source="fixture")
    steps = [s for t in cc.turns for s in t.steps if s.tools]
    assert steps and all(s.model_seconds is not None and s.tool_seconds is not None for s in steps)
    mini = load_mini_swe(FIXTURES / "mini_swe_django-11099_head.traj.json", name="mini", source="fixture")
    timed = [s for t in mini.turns for s in t.steps if s.tools]
    # The first reply follows the task, which has no timestamp: its latency is drawn.
    assert all(s.model_seconds is not None and s.model_seconds >= 0 for s in timed[1:])
    assert all(s.tool_seconds is not None and s.tool_seconds >= 0 for s in timed)


def untimed(turns: int = 4) -> Trajectory:
    return Trajectory(
        name="untimed",
        source="test",
        turns=[
            Turn(
                user=[UserText(text=f"question {i}")],
                steps=[Step(tools=[ToolCall(name="Bash", input={"command": "ls"}, output="a.py")]), Step(text="ok")],
            )
            for i in range(turns)
        ],
    )


def test_missing_times_are_drawn_from_the_measured_gaps_the_same_way_every_time():
    samples = GapSamples(source="test", think=[30.0, 60.0], model=[4.0], tool=[0.5])
    first = with_times(untimed(), samples)
    assert first == with_times(untimed(), samples)
    assert first.turns[0].think_seconds == 0.0
    assert {t.think_seconds for t in first.turns[1:]} <= {30.0, 60.0}
    assert all(s.model_seconds == 4.0 for t in first.turns for s in t.steps)
    assert [s.tool_seconds for s in first.turns[0].steps] == [0.5, 0.0]
    recorded = untimed()
    recorded.turns[1].think_seconds = 7.0
    assert with_times(recorded, samples).turns[1].think_seconds == 7.0
    paused = with_times(untimed(12), samples, Pauses(share=0.5, minutes=(10,)))
    lengths = [t.think_seconds for t in paused.turns]
    assert lengths[0] == 0.0 and 600.0 in lengths and set(lengths[1:]) <= {30.0, 60.0, 600.0}


def test_the_committed_gaps_are_those_of_the_shared_sessions(shared_data: Path):
    measured = measure_gaps(claude_code_samples(shared_data), GapSamples.load().source)
    assert measured == GapSamples.load(GAPS_FILE)


def paused_trajectory() -> Trajectory:
    """Four turns of sizeable output; the user pauses 20 minutes before the third."""
    turns = []
    for i in range(4):
        call = ToolCall(name="Bash", input={"command": f"cat part_{i}.py"}, output=f"row {i} " * 1500)
        turns.append(
            Turn(
                user=[UserText(text=f"Explain part {i} (#{i * 7919}).")],
                steps=[Step(tools=[call], model_seconds=3.0, tool_seconds=0.2), Step(text="Done.", model_seconds=2.0)],
                think_seconds=1200.0 if i == 2 else 20.0,
            )
        )
    return Trajectory(name="paused", source="test", turns=turns)


def test_a_pause_past_five_minutes_makes_the_next_request_write_the_prefix_again():
    ours = STRATEGIES[0]
    hour = next(s for s in DIAGNOSTIC_VARIANTS if s.name == "agent-repl with 1h cache")
    five = asyncio.run(run_one(paused_trajectory(), ours, 200_000))
    assert (five.pauses, five.pause_rewrites) == (1, 1)
    assert five.sim_minutes > 20
    kept = asyncio.run(run_one(paused_trajectory(), hour, 200_000))
    assert (kept.pauses, kept.pause_rewrites) == (1, 0)
    assert kept.totals["cache_write_1h_tokens"] > 0 and kept.totals["cache_write_5m_tokens"] == 0
