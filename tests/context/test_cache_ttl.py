"""Breakpoint lifetimes (agent_repl.context.cache_ttl, core.request.CacheMarks): which policy marks
what, that the emulator accepts the marks and bills the hour, and when the cache counts as cold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_repl.context.boundary import BoundarySlice
from agent_repl.context.cache_ttl import cache_marks, cold_after_minutes
from agent_repl.context.projector import Pipeline
from agent_repl.context.state import PipelineConfig, PipelineState
from agent_repl.core.api.request import CacheMarks, build_request
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    iso_timestamp,
)
from agent_repl.emulator.engine import Engine
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import CallablePolicy, Reply

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
SYSTEM = "You are a careful assistant. " * 150
TOOLS = [{"name": "Read", "description": "Read a file. " * 40, "input_schema": {"type": "object"}}]


def turn(index: int, start: datetime) -> list[Message]:
    """A prompt, one tool round and a final reply, starting at `start`."""
    return [
        UserMessage(content=f"Question {index}: explain part {index} of the code.", timestamp=iso_timestamp(start)),
        AssistantMessage(
            message_id=f"a{index}",
            content=[ToolUseBlock(id=f"t{index}", name="Read", input={"file_path": f"/f{index}"})],
            timestamp=iso_timestamp(start + timedelta(seconds=5)),
        ),
        UserMessage(content=[ToolResultBlock(tool_use_id=f"t{index}", content=f"row {index} " * 600)]),
        AssistantMessage(
            message_id=f"b{index}",
            content=[TextBlock(text=f"Part {index} reads its config.")],
            timestamp=iso_timestamp(start + timedelta(seconds=10)),
        ),
    ]


def session(gaps_minutes: list[float], *, keep: int = -1) -> list[Message]:
    """Turns after these gaps; the last one in flight (only its first `keep` entries: by default
    all but its final reply)."""
    history: list[Message] = []
    moment = T0
    for index, gap in enumerate(gaps_minutes):
        moment += timedelta(minutes=gap)
        history += turn(index, moment)
    return history[: len(history) - 4 + keep] if keep >= 0 else history[:-1]


def state_for(policy: str) -> PipelineState:
    return PipelineState(config=PipelineConfig(cache_ttl=policy, clear_at_expiry=True))  # type: ignore[arg-type]


def marks(history: list[Message], policy: str) -> tuple[CacheMarks, list[dict]]:
    state = state_for(policy)
    projection = Pipeline([BoundarySlice()], state).project(history)
    return cache_marks(history, projection.wire, projection.wire_sources, state), projection.wire


def test_auto_turns_the_hour_on_from_the_first_pause_between_turns():
    quick = session([0, 1, 2])
    assert marks(quick, "auto")[0] == CacheMarks()
    paused = session([0, 1, 12])  # the third turn comes 12 minutes after the second ended
    chosen, wire = marks(paused, "auto")
    assert chosen.hour_until == len(wire) - 1
    assert marks(paused, "5m")[0] == CacheMarks()


def test_prefix_1h_marks_the_turn_prompt_and_keeps_the_tail_at_five_minutes():
    chosen, wire = marks(session([0, 1, 2]), "prefix-1h")
    prompt = next(i for i in range(len(wire) - 1, -1, -1) if "Question 2" in str(wire[i]["content"]))
    assert chosen == CacheMarks(hour_until=prompt, anchor=prompt)


@pytest.mark.parametrize("policy", ["1h", "prefix-1h"])
def test_the_emulator_accepts_the_marks_and_bills_the_hour(policy: str):
    history = session([0, 1, 2])
    chosen, wire = marks(history, policy)
    body = build_request(model="claude-sonnet-5-5", max_tokens=50, system=SYSTEM, tools=TOOLS, messages=wire, cache=chosen)
    ttls = [b["cache_control"].get("ttl", "5m") for m in body["messages"] for b in m["content"] if "cache_control" in b]
    system_ttl = body["system"][0]["cache_control"].get("ttl")
    assert system_ttl == "1h" and len(ttls) + 1 + sum("cache_control" in t for t in body["tools"]) <= 4
    engine = Engine(default_model_table(), CallablePolicy(lambda r: Reply([{"type": "text", "text": "ok"}])), clock=lambda: 1.0)
    prepared = engine.prepare(body, api_key="k", betas=set(), request_index=0)
    usage = prepared.usage["cache_creation"]
    assert usage["ephemeral_1h_input_tokens"] > 0
    assert (usage["ephemeral_5m_input_tokens"] > 0) == (policy == "prefix-1h")


def test_the_cache_is_cold_after_what_the_last_request_wrote_expires():
    quick = session([0, 1, 2])
    assert cold_after_minutes(quick, state_for("5m")) == 5
    assert cold_after_minutes(quick, state_for("1h")) == 60
    # "auto": the request before this turn's prompt had seen no pause yet, so it wrote 5 minutes;
    # once one has, the hour.
    assert cold_after_minutes(session([0, 1, 12], keep=1), state_for("auto")) == 5
    assert cold_after_minutes(session([0, 12, 1], keep=1), state_for("auto")) == 60
    seeds = PipelineState(config=PipelineConfig(clear_at_expiry=False))
    assert cold_after_minutes(quick, seeds) == seeds.config.cache_cold_gap_minutes
