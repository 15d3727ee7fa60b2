"""The query loop's event sequence for each way a turn goes round or ends, through the real loop,
the real SDK and the scripted emulator. Runs of streamed deltas count as one step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.events import AgentEvent, TextDelta, ThinkingDelta, TurnEnded
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from tests.e2e.compaction_support import run, settings_for

DELTAS = (TextDelta, ThinkingDelta)


def sequence(events: list[AgentEvent]) -> list[str]:
    """Event class names in order, a run of deltas of one kind shown once."""
    names: list[str] = []
    for event in events:
        name = type(event).__name__
        if isinstance(event, DELTAS) and names and names[-1] == name:
            continue
        names.append(name)
    return names


async def play(steps: list[dict[str, Any]], tmp_path: Path, *, fault: str | None = None, **settings: Any):
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps})).start()
    session = await open_session(settings_for(server, tmp_path, autocompact=False, **settings), tmp_path)
    try:
        if fault is not None:
            server.faults.next(fault)
        events = await run(session, "go")
    finally:
        await close_session(session)
        server.stop()
    return events, session


ONE_REQUEST = ["ContextProjected", "TextDelta", "UsageEvent", "AssistantMessageEvent"]


def ended(events: list[AgentEvent]) -> TurnEnded:
    last = events[-1]
    assert isinstance(last, TurnEnded)
    return last


async def test_a_reply_without_tool_calls_completes(tmp_path):
    events, _ = await play([{"text": "Done."}], tmp_path)
    assert sequence(events) == ["TurnStarted", *ONE_REQUEST, "TurnEnded"]
    assert ended(events).reason == "completed" and ended(events).num_requests == 1


async def test_tool_results_go_round_again(tmp_path):
    steps = [{"tools": [{"name": "Bash", "input": {"command": "true"}}]}, {"text": "Done."}]
    events, _ = await play(steps, tmp_path, skip_permissions=True)
    assert sequence(events) == [
        "TurnStarted",
        "ContextProjected", "UsageEvent", "AssistantMessageEvent", "ToolUseStarted", "ToolResultEvent",
        *ONE_REQUEST,
        "TurnEnded",
    ]
    assert ended(events).num_requests == 2


async def test_a_cut_reply_raises_the_cap_then_asks_to_continue(tmp_path):
    cut = {"text": "Half", "stop_reason": "max_tokens"}
    events, _ = await play([cut, {"text": "Rest."}], tmp_path)
    assert sequence(events) == [
        "TurnStarted",
        # max_output_tokens_escalate: the cut reply is withheld and the request sent again.
        "ContextProjected", "TextDelta", "UsageEvent", "RequestRetry",
        # max_output_tokens_recovery: cut again at the raised cap, kept, and the model told to go on.
        *ONE_REQUEST,
        *ONE_REQUEST,
        "TurnEnded",
    ]
    assert ended(events).reason == "completed" and ended(events).num_requests == 3


async def test_pause_turn_continues(tmp_path):
    steps = [{"text": "Searching.", "stop_reason": "pause_turn"}, {"text": "Found."}]
    events, _ = await play(steps, tmp_path)
    assert sequence(events) == ["TurnStarted", *ONE_REQUEST, *ONE_REQUEST, "TurnEnded"]


async def test_a_refusal_ends_the_turn(tmp_path):
    events, _ = await play([{"text": "No", "stop_reason": "refusal"}], tmp_path)
    assert sequence(events) == ["TurnStarted", *ONE_REQUEST, "SystemMessageEvent", "ErrorEvent", "TurnEnded"]
    assert ended(events).reason == "refusal"


async def test_a_stream_that_fails_midway_is_retried(tmp_path):
    events, _ = await play([{"text": "Done."}], tmp_path, fault="stream_error", max_retries=0)
    assert sequence(events) == ["TurnStarted", "ContextProjected", "TextDelta", "RequestRetry", *ONE_REQUEST, "TurnEnded"]


async def test_overload_without_a_fallback_model_ends_with_one_error(tmp_path):
    events, _ = await play([{"text": "Done."}], tmp_path, fault="529", max_retries=0)
    assert sequence(events) == ["TurnStarted", "ContextProjected", "SystemMessageEvent", "ErrorEvent", "TurnEnded"]
    assert ended(events).reason == "error"


async def test_overload_switches_to_the_fallback_model(tmp_path):
    events, session = await play(
        [{"text": "Done."}], tmp_path, fault="529", max_retries=0, fallback_model="claude-sonnet-4-5"
    )
    assert sequence(events) == ["TurnStarted", "ContextProjected", "SystemMessageEvent", *ONE_REQUEST, "TurnEnded"]
    assert session.model == "claude-sonnet-4-5" and ended(events).reason == "completed"


async def test_max_turns_ends_after_tool_results(tmp_path):
    steps = [{"tools": [{"name": "Bash", "input": {"command": "true"}}]}, {"text": "Done."}]
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps})).start()
    session = await open_session(settings_for(server, tmp_path, autocompact=False, skip_permissions=True), tmp_path)
    try:
        events = [event async for event in session.run_turn("go", max_turns=1)]
    finally:
        await close_session(session)
        server.stop()
    assert sequence(events) == [
        "TurnStarted", "ContextProjected", "UsageEvent", "AssistantMessageEvent", "ToolUseStarted",
        "ToolResultEvent", "TurnEnded",
    ]
    assert ended(events).reason == "max_turns"
