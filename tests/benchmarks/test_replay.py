"""The replay executor is deterministic and never runs anything; the harness runs each strategy."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_repl.core.tooling.tool import ToolContext
from agent_repl.emulator.policies import ScriptPolicy
from benchmarks.replay.convert_mini_swe import load_mini_swe
from benchmarks.replay.harness import run_home, run_one
from benchmarks.replay.replay_tools import UNKNOWN_CALL, AnyArgs, recorded_outputs, replay_tools
from benchmarks.replay.strategies import STRATEGIES
from benchmarks.replay.trajectory import Step, ToolCall, Trajectory, Turn, UserText

from .conftest import FIXTURES


def fixture_trajectory() -> Trajectory:
    return load_mini_swe(FIXTURES / "mini_swe_django-11099_head.traj.json", name="django-head", source="fixture")


def test_recorded_outputs_are_keyed_by_the_ids_the_script_policy_gives():
    t = fixture_trajectory()
    scenario = t.scenario()
    table = recorded_outputs(t, scenario)
    policy = ScriptPolicy(scenario)
    calls = [c for turn in t.turns for s in turn.steps for c in s.tools]
    ids = [b["id"] for i in range(len(scenario["steps"])) for b in policy.step_reply(i).content if b["type"] == "tool_use"]
    assert [table[i][0] for i in ids] == [c.output for c in calls]
    assert recorded_outputs(t, scenario) == table  # the same ids every time


async def test_replay_tools_return_the_recording_and_never_run_anything(tmp_path: Path):
    t = fixture_trajectory()
    scenario = t.scenario()
    tools = {tool.name: tool for tool in replay_tools(t, scenario)}
    assert {"Bash", "Read", "Grep", "Glob", "Snip"} <= set(tools)
    assert tools["Bash"].api_schema()["input_schema"]["required"] == ["command"]  # our Bash's schema
    table = recorded_outputs(t, scenario)
    some_id, (text, _) = next(iter(table.items()))
    bash = tools["Bash"]
    marker = tmp_path / "ran"
    args = AnyArgs.model_validate({"command": f"touch {marker}"})
    first = await bash.run(args, ToolContext(cwd=tmp_path, tool_results_dir=tmp_path, tool_use_id=some_id))
    again = await bash.run(args, ToolContext(cwd=tmp_path, tool_results_dir=tmp_path, tool_use_id=some_id))
    assert first.content == again.content == text and not marker.exists()
    unknown = await bash.run(args, ToolContext(cwd=tmp_path, tool_results_dir=tmp_path, tool_use_id="toolu_other"))
    assert unknown.is_error and unknown.content == UNKNOWN_CALL


def test_a_replay_gives_the_same_numbers_twice():
    t = fixture_trajectory()
    strategy = STRATEGIES[0]
    first = asyncio.run(run_one(t, strategy, 200_000))
    second = asyncio.run(run_one(t, strategy, 200_000))
    assert first.completed and first.main_requests == t.request_count
    assert first.input_series == second.input_series
    assert first.totals == second.totals and first.cost_units == second.cost_units
    assert (first.users_kept, first.users_total) == (1, 1)


def test_a_persisted_output_shows_the_same_path_in_every_replay_of_a_run():
    # The preview names the file under the run's home: a random home name moved token counts.
    call = ToolCall(name="Bash", input={"command": "cat big.log"}, output="".join(f"entry {i}\n" for i in range(12_000)))
    turn = Turn(user=[UserText(text="Read the log.")], steps=[Step(text="Reading.", tools=[call]), Step(text="Done.")])
    t = Trajectory(name="persisted", source="test", turns=[turn])
    strategy = STRATEGIES[0]
    runs = [asyncio.run(run_one(t, strategy, 200_000)) for _ in range(5)]
    assert runs[0].peak_input < 10_000  # the model saw a preview of the file, not the whole output
    assert len({tuple(r.input_series) for r in runs}) == 1
    assert len({r.cost_units for r in runs}) == 1


def test_each_run_gets_a_fresh_home_named_by_the_run():
    with run_home("t/agent-repl/200000/measured") as home:
        (home / "left-over").mkdir(parents=True)
    with run_home("t/agent-repl/200000/measured") as again, run_home("t/agent-repl/50000/measured") as other:
        assert again == home and not again.exists()
        assert other != home


WINDOW = 40_000


def long_trajectory(turns: int = 6) -> Trajectory:
    """Turns of big tool outputs, more than a 40K window holds. Each output is about
    3K tokens on the benchmark model's tokenizer, a tenth of the window, so no single step carries
    codex-style's 90% trigger past the window's edge."""
    result = []
    for turn in range(turns):
        calls = [
            ToolCall(name="Bash", input={"command": f"cat module_{turn}_{i}.py"}, output=f"line {turn}.{i} " * 430)
            for i in range(3)
        ]
        steps = [Step(text=f"Reading part {i}.", tools=[call]) for i, call in enumerate(calls)]
        result.append(Turn(user=[UserText(text=f"Please explain module {turn} (#{turn * 7919}).")], steps=[*steps, Step(text="Done.")]))
    return Trajectory(name="synthetic", source="test", turns=result)


@pytest.mark.parametrize("name", ["codex-style", "gemini-style", "opencode-style", "truncate", "naive"])
def test_each_peer_strategy_runs_through_the_real_loop(name: str):
    t = long_trajectory()
    strategy = next(s for s in STRATEGIES if s.name == name)
    # 40K: the built-in tools' definitions (about 7K tokens with the background-command tools) take
    # a share of the window, and opencode-style keeps 20K of it free; at 30K its summary requests
    # no longer fit and it dropped the oldest turns' user messages from them.
    result = asyncio.run(run_one(t, strategy, WINDOW))
    if name == "naive":
        assert not result.completed and result.overflow_errors == 1
        return
    assert result.completed, result.stop_reason
    assert result.overflow_errors == 0 and result.compactions >= 1
    assert result.peak_input < WINDOW
    if name in ("codex-style", "gemini-style", "opencode-style"):
        assert result.summary_calls >= result.compactions
        assert (result.users_kept, result.users_total) == (6, 6)  # quoted in the summary or kept
    else:
        assert result.summary_calls == 0 and result.users_kept < result.users_total
