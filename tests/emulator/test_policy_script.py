"""The script policy: steps advance on completion, retries get the same answer, ids are stable."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent_repl.emulator.engine import Engine
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import ScenarioError, ScriptPolicy, policy_from_spec

SCENARIO: dict[str, Any] = {
    "steps": [
        {"text": "Looking.", "tools": [{"name": "Bash", "input": {"command": "ls"}}]},
        {
            "thinking": "The listing shows a README.",
            "tools": [{"name": "Read", "input": {"file_path": "/abs/README.md"}}],
        },
        {"text": "Final answer."},
    ]
}
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def make_engine(policy: ScriptPolicy) -> Engine:
    return Engine(default_model_table(), policy, clock=lambda: 0.0)


def body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    # Haiku 5.5 keeps text between tool calls as text; the display is asked for, not omitted.
    return {
        "model": "claude-haiku-5-5",
        "max_tokens": 500,
        "messages": messages,
        "thinking": {"type": "adaptive", "display": "summarized"},
        **extra,
    }


def ask(
    engine: Engine, messages: list[dict[str, Any]], complete: bool = True, **extra: Any
) -> dict[str, Any]:
    prepared = engine.prepare(body(messages, **extra), api_key="k", betas=set(), request_index=0)
    completion = engine.respond(prepared)
    engine.commit(prepared)
    if complete:
        engine.completed(prepared, completion)
    return {"role": "assistant", "content": completion.content, "stop_reason": completion.stop_reason}


def result_for(reply: dict[str, Any], text: str) -> dict[str, Any]:
    uses = [b for b in reply["content"] if b["type"] == "tool_use"]
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": u["id"], "content": text} for u in uses],
    }


def as_message(reply: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": reply["content"]}


def test_steps_play_in_order_with_the_right_stop_reasons() -> None:
    policy = ScriptPolicy(SCENARIO)
    engine = make_engine(policy)
    history: list[dict[str, Any]] = [{"role": "user", "content": "What is here?"}]
    first = ask(engine, history)
    assert first["stop_reason"] == "tool_use"
    assert [b["type"] for b in first["content"]] == ["text", "tool_use"]
    assert first["content"][1]["input"] == {"command": "ls"}
    history += [as_message(first), result_for(first, "README.md")]
    second = ask(engine, history)
    assert [b["type"] for b in second["content"]] == ["thinking", "tool_use"]
    assert second["content"][0]["thinking"] == "The listing shows a README."
    assert second["content"][0]["signature"]
    history += [as_message(second), result_for(second, "# Title")]
    third = ask(engine, history)
    assert (third["content"], third["stop_reason"]) == (
        [{"type": "text", "text": "Final answer."}],
        "end_turn",
    )
    assert policy.cursor == 3
    history += [as_message(third), {"role": "user", "content": "And now?"}]
    done = ask(engine, history)
    assert done["stop_reason"] == "end_turn"
    assert "script is finished" in done["content"][0]["text"]


def test_retries_neither_skip_nor_repeat_steps() -> None:
    policy = ScriptPolicy(SCENARIO)
    engine = make_engine(policy)
    history: list[dict[str, Any]] = [{"role": "user", "content": "What is here?"}]
    dropped = ask(engine, history, complete=False)  # the stream broke before message_stop
    assert policy.cursor == 0
    retried = ask(engine, history)
    assert retried == dropped
    assert policy.cursor == 1
    # The same request again after completion (another retry, with a moved cache marker) is memoized.
    marked = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "What is here?", "cache_control": {"type": "ephemeral"}}],
        }
    ]
    assert ask(engine, marked) == retried
    assert policy.cursor == 1
    history += [as_message(retried), result_for(retried, "README.md")]
    assert ask(engine, history)["content"][-1]["name"] == "Read"
    assert policy.cursor == 2


def test_a_retry_on_a_fallback_model_gets_the_same_step() -> None:
    policy = ScriptPolicy(SCENARIO)
    engine = make_engine(policy)
    history: list[dict[str, Any]] = [{"role": "user", "content": "What is here?"}]
    first = ask(engine, history)
    again = engine.prepare(
        {**body(history), "model": "claude-opus-4-5"}, api_key="k", betas=set(), request_index=1
    )
    assert engine.respond(again).content == first["content"]


def test_a_refused_request_sent_to_another_model_takes_the_next_step() -> None:
    policy = ScriptPolicy({"steps": [{"text": "No.", "stop_reason": "refusal"}, {"text": "Sure."}]})
    engine = make_engine(policy)
    history: list[dict[str, Any]] = [{"role": "user", "content": "What is here?"}]
    assert ask(engine, history)["stop_reason"] == "refusal"
    assert ask(engine, history)["stop_reason"] == "refusal"  # the same model again: the same step
    fallback = engine.prepare({**body(history), "model": "claude-opus-4-5"}, api_key="k", betas=set(), request_index=2)
    assert engine.respond(fallback).content == [{"type": "text", "text": "Sure."}]


def test_tool_use_ids_are_deterministic_and_valid() -> None:
    first = ScriptPolicy(SCENARIO).step_reply(0).content[1]["id"]
    again = ScriptPolicy(json.loads(json.dumps(SCENARIO))).step_reply(0).content[1]["id"]
    other_step = ScriptPolicy(SCENARIO).step_reply(1).content[1]["id"]
    assert first == again != other_step
    assert TOOL_ID.match(first) and first.startswith("toolu_01") and len(first) == len("toolu_01") + 22
    two_tools = ScriptPolicy({"steps": [{"tools": [{"name": "A", "input": {}}, {"name": "B", "input": {}}]}]})
    ids = [b["id"] for b in two_tools.step_reply(0).content]
    assert len(set(ids)) == 2


def test_a_step_may_force_its_stop_reason() -> None:
    policy = ScriptPolicy({"steps": [{"text": "cut short", "stop_reason": "max_tokens"}]})
    assert policy.step_reply(0).stop_reason == "max_tokens"


def test_summary_requests_do_not_consume_steps() -> None:
    policy = ScriptPolicy(SCENARIO)
    engine = make_engine(policy)
    history: list[dict[str, Any]] = [{"role": "user", "content": "What is here?"}]
    first = ask(engine, history)
    history += [as_message(first), result_for(first, "README.md")]
    summary = ask(
        engine, [*history, {"role": "user", "content": "<summary-request>Summarize.</summary-request>"}]
    )
    # The default summarizer's plain lines, which quote how the conversation began.
    assert "It began with: What is here?" in summary["content"][0]["text"]
    assert policy.cursor == 1
    assert ask(engine, history)["content"][-1]["name"] == "Read"


def test_bad_scenarios_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"steps\.0\.tools\.0\.name"):
        ScriptPolicy({"steps": [{"tools": [{"input": {}}]}]})
    with pytest.raises(ScenarioError, match=r"steps\.0\.colour: Extra inputs are not permitted"):
        ScriptPolicy({"steps": [{"colour": "red"}]})
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ScenarioError, match="not valid JSON"):
        ScriptPolicy.from_file(broken)
    with pytest.raises(ScenarioError, match="cannot read scenario"):
        ScriptPolicy.from_file(tmp_path / "missing.json")


def test_policy_from_spec_loads_a_scenario_file(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(SCENARIO))
    policy = policy_from_spec(f"script:{scenario}")
    assert isinstance(policy, ScriptPolicy) and len(policy.steps) == 3
    with pytest.raises(ValueError, match="unknown policy"):
        policy_from_spec("oracle")
