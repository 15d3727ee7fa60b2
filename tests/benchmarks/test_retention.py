"""Needles and the retention measured after each compaction: planting is deterministic, the measure
counts what the view holds at the first request after a compaction and notices a dropped needle."""

from __future__ import annotations

import asyncio

from benchmarks.replay.harness import RetentionProbe, run_one
from benchmarks.replay.metrics import Aggregate, RunResult, todo_items
from benchmarks.replay.needles import needle_values, plant_needles
from benchmarks.replay.replay_tools import bash_structured
from benchmarks.replay.report import retention_after_checks
from benchmarks.replay.strategies import STRATEGIES
from benchmarks.replay.trajectory import Step, ToolCall, Trajectory, Turn, UserText

from .test_replay import WINDOW, long_trajectory


def one_turn() -> Trajectory:
    steps = [Step(text="Looking.", tools=[ToolCall(name="Read", input={"file_path": "src/app.py"})]), Step(text="Done.")]
    return Trajectory(name="single", source="test", turns=[Turn(user=[UserText(text="Fix the app.")], steps=steps)])


def test_needles_are_stated_early_asked_for_last_and_the_same_every_time():
    original = long_trajectory(4)
    planted = plant_needles(original)
    assert planted.needles == plant_needles(original).needles == needle_values("synthetic")
    assert len(set(planted.needles)) == 3 and not original.needles
    assert len(planted.turns) == len(original.turns) + 1 and len(original.turns[0].user) == 1
    for index, value in enumerate(planted.needles):
        turn = planted.turns[index]
        assert value in turn.user[0].text and turn.user[-1] == original.turns[index].user[-1]
    question = planted.turns[-1].user[-1].text
    assert "remember" in question and not any(v in question for v in planted.needles)
    typed = planted.typed_user_messages()
    assert all(any(v in t for t in typed) for v in planted.needles)


def test_a_single_turn_gets_every_needle_before_its_prompt():
    planted = plant_needles(one_turn())
    first = planted.turns[0].user
    assert [u.text for u in first][-1] == "Fix the app." and len(first) == 4
    assert all(any(v in u.text for u in first) for v in planted.needles)


def test_todo_items_are_those_of_the_last_successful_todo_write():
    def write(*items: str, error: bool = False) -> Step:
        todos = [{"content": c, "status": "pending", "activeForm": c} for c in items]
        return Step(tools=[ToolCall(name="TodoWrite", input={"todos": todos}, is_error=error)])

    assert todo_items([write("a", "b"), write("c"), write("d", error=True)]) == ["c"]
    assert todo_items([Step(text="no list")]) == []


def probe_after_one_compaction(view: str) -> RetentionProbe:
    planted = plant_needles(one_turn())
    users = [u.text for u in planted.turns[0].user]
    probe = RetentionProbe(planted, users, count=lambda: 1)
    probe.main_request({"messages": [{"role": "user", "content": view}]}, index=5, steps_done=1)
    return probe


def test_a_replayed_bash_failure_carries_its_exit_code_as_our_bash_does():
    structured = bash_structured("Exit code 2\nno such file", True)
    assert structured["returnCode"] == 2 and structured["stdout"] == "no such file"
    assert bash_structured("ok", False)["returnCode"] == 0


def test_the_measure_notices_a_dropped_needle_after_a_compaction():
    planted = plant_needles(one_turn())
    users = [u.text for u in planted.turns[0].user]
    whole = probe_after_one_compaction("\n".join([*users, "src/app.py"]))
    assert whole.points[0]["needles"] == [3, 3] and whole.points[0]["users"] == [4, 4]
    assert whole.points[0]["files"] == [1, 1]
    dropped = probe_after_one_compaction("\n".join([*users[1:], "src/app.py"]))
    assert dropped.points[0]["needles"] == [2, 3] and dropped.points[0]["users"] == [3, 4]
    # Only the first request after a compaction is measured.
    dropped.main_request({"messages": []}, index=6, steps_done=2)
    assert len(dropped.points) == 1
    runs = [RunResult("single", "agent-repl", WINDOW, 2, compactions=1, after_compaction=[{**p, "above_base": 0}]) for p in dropped.points]
    aggregate = Aggregate("agent-repl", runs)
    assert aggregate.after_compaction("needles") == (2, 3, 1)
    verdicts = {c.what: c.verdict for c in retention_after_checks([aggregate])}
    assert verdicts["agent-repl keeps 100% of user messages after every compaction"] == "NOT MET"


def test_agent_repl_keeps_every_user_message_and_needle_after_each_lossy_compaction():
    """Through the real loop: the summary quotes nothing, and the view still holds what the user said
    and the paths the calls named, a failed command's too (it ran: it has an exit code)."""
    t = plant_needles(long_trajectory())
    failed = t.turns[0].steps[0].tools[0]
    failed.output, failed.is_error = f"Exit code 1\n{failed.output}", True
    strategy = next(s for s in STRATEGIES if s.name == "agent-repl")
    result = asyncio.run(run_one(t, strategy, WINDOW, summaries="lossy"))
    assert result.completed and result.compactions >= 1
    assert len(result.after_compaction) == result.compactions
    for point in result.after_compaction:
        assert point["users"][0] == point["users"][1] and point["needles"] == [3, 3], point
        assert point["files"][0] == point["files"][1], point
        assert point["above_base"] > 0
    assert result.needles_at_question == [3, 3]
    # Realistic-sized summaries: the meter charges thousands of output tokens for each.
    assert result.output_by_kind["summary"] / result.summary_calls > 2_000


def test_truncate_loses_the_needles_it_drops():
    t = plant_needles(long_trajectory())
    strategy = next(s for s in STRATEGIES if s.name == "truncate")
    result = asyncio.run(run_one(t, strategy, WINDOW, summaries="lossy"))
    assert result.compactions >= 1
    assert any(p["needles"][0] < p["needles"][1] for p in result.after_compaction)
    assert result.needles_at_question[0] < 3
