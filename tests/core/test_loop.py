"""The query loop's event sequence for each way a turn goes round or ends, through the real loop,
the real SDK and the scripted emulator. Runs of streamed deltas count as one step; every pass of
the loop opens with `ContextProjected`, whose `transition` says why it runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.loop import query as loop
from agent_repl.core.model.events import (
    AgentEvent,
    ContextProjected,
    EntryAppended,
    TextDelta,
    ThinkingDelta,
    TurnEnded,
)
from agent_repl.core.model.messages import AssistantMessage, UserMessage
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer
from tests.e2e.compaction_support import settings_for
from tests.e2e.hook_support import hook_script, hooks_setting

DELTAS = (TextDelta, ThinkingDelta)
BASH = {"name": "Bash", "input": {"command": "true"}}


def sequence(events: list[AgentEvent]) -> list[str]:
    """Event class names in order, a run of deltas of one kind shown once; the entries announced on
    their own (`EntryAppended`, tests/core/test_entries.py) left out."""
    names: list[str] = []
    for event in events:
        name = type(event).__name__
        if isinstance(event, EntryAppended) or (isinstance(event, DELTAS) and names and names[-1] == name):
            continue
        names.append(name)
    return names


def transitions(events: list[AgentEvent]) -> list[str]:
    return [e.transition for e in events if isinstance(e, ContextProjected)]


async def play(
    steps: list[dict[str, Any]],
    tmp_path: Path,
    *,
    fault: str | None = None,
    before: tuple[str, ...] = (),
    max_turns: int | None = None,
    on_event: Callable[[Any, AgentEvent], None] | None = None,
    server: EmulatorServer | None = None,
    **settings: Any,
):
    """The events of the turn "go" (after the turns `before`, whose events are dropped)."""
    server = server or EmulatorServer(policy=ScriptPolicy({"steps": steps}), summarizer=AgentSummarizer())
    server.start()
    settings.setdefault("autocompact", False)
    session = await open_session(settings_for(server, tmp_path, **settings), tmp_path)
    events: list[AgentEvent] = []
    try:
        for prompt in before:
            [_ async for _ in session.run_turn(prompt)]
        if fault is not None:
            server.faults.next(fault)
        async for event in session.run_turn("go", max_turns=max_turns):
            events.append(event)
            if on_event is not None:
                on_event(session, event)
    finally:
        await close_session(session)
        server.stop()
    return events, session, server


ONE_REQUEST = ["ContextProjected", "TextDelta", "UsageEvent", "AssistantMessageEvent"]
TOOL_REQUEST = ["ContextProjected", "UsageEvent", "AssistantMessageEvent", "ToolUseStarted", "ToolResultEvent"]


def ended(events: list[AgentEvent]) -> TurnEnded:
    last = events[-1]
    assert isinstance(last, TurnEnded)
    assert [e for e in events if isinstance(e, TurnEnded)] == [last]
    return last


async def test_a_reply_without_tool_calls_completes(tmp_path):
    events, _, _ = await play([{"text": "Done."}], tmp_path)
    assert sequence(events) == ["TurnStarted", *ONE_REQUEST, "TurnEnded"]
    assert transitions(events) == ["start"]
    assert ended(events).reason == "completed" and ended(events).num_requests == 1


async def test_tool_results_go_round_again(tmp_path):
    events, _, _ = await play([{"tools": [BASH]}, {"text": "Done."}], tmp_path)
    assert sequence(events) == ["TurnStarted", *TOOL_REQUEST, *ONE_REQUEST, "TurnEnded"]
    assert transitions(events) == ["start", "tool_results"]
    assert ended(events).num_requests == 2


async def test_a_cut_reply_raises_the_cap_then_asks_to_continue(tmp_path):
    cut = {"text": "Half", "stop_reason": "max_tokens"}
    events, _, server = await play([cut, {"text": "Rest."}], tmp_path)
    assert sequence(events) == [
        "TurnStarted",
        # The cut reply is withheld and the request sent again with a higher cap.
        "ContextProjected", "TextDelta", "UsageEvent", "RequestRetry",
        # Cut again at the raised cap: kept, and the model told to go on.
        *ONE_REQUEST,
        *ONE_REQUEST,
        "TurnEnded",
    ]
    assert transitions(events) == ["start", "max_output_tokens_escalate", "max_output_tokens_recovery"]
    assert [e.body["max_tokens"] for e in server.recordings.messages] == [32000, 64000, 64000]
    assert ended(events).reason == "completed" and ended(events).num_requests == 3


async def test_a_reply_cut_after_three_nudges_ends_with_an_error(tmp_path):
    cut = {"text": "Half", "stop_reason": "max_tokens"}
    events, _, _ = await play([cut] * 5, tmp_path)
    assert sequence(events) == [
        "TurnStarted", "ContextProjected", "TextDelta", "UsageEvent", "RequestRetry",
        *ONE_REQUEST * 4, "ErrorEvent", "TurnEnded",
    ]
    assert transitions(events) == ["start", "max_output_tokens_escalate", *["max_output_tokens_recovery"] * 3]
    assert ended(events).reason == "error"


async def test_pause_turn_continues(tmp_path):
    steps = [{"text": "Searching.", "stop_reason": "pause_turn"}, {"text": "Found."}]
    events, _, _ = await play(steps, tmp_path)
    assert sequence(events) == ["TurnStarted", *ONE_REQUEST, *ONE_REQUEST, "TurnEnded"]
    assert transitions(events) == ["start", "pause_turn"]


async def test_a_turn_paused_too_often_ends_with_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(loop, "MAX_PAUSE_CONTINUATIONS", 1)
    events, _, _ = await play([{"text": "Searching.", "stop_reason": "pause_turn"}] * 2, tmp_path)
    assert sequence(events) == ["TurnStarted", *ONE_REQUEST * 2, "ErrorEvent", "TurnEnded"]
    assert transitions(events) == ["start", "pause_turn"]
    assert ended(events).reason == "error"


async def test_a_refusal_ends_the_turn(tmp_path):
    events, _, _ = await play([{"text": "No", "stop_reason": "refusal"}], tmp_path)
    assert sequence(events) == ["TurnStarted", *ONE_REQUEST, "SystemMessageEvent", "ErrorEvent", "TurnEnded"]
    assert ended(events).reason == "refusal"


async def test_a_stream_that_fails_midway_is_retried(tmp_path):
    events, _, _ = await play([{"text": "Done."}], tmp_path, fault="stream_error", max_retries=0)
    assert sequence(events) == ["TurnStarted", "ContextProjected", "TextDelta", "RequestRetry", *ONE_REQUEST, "TurnEnded"]
    assert transitions(events) == ["start", "stream_retry"]


async def test_overload_without_a_fallback_model_ends_with_one_error(tmp_path):
    events, _, _ = await play([{"text": "Done."}], tmp_path, fault="529", max_retries=0)
    assert sequence(events) == ["TurnStarted", "ContextProjected", "SystemMessageEvent", "ErrorEvent", "TurnEnded"]
    assert ended(events).reason == "error"


async def test_overload_switches_to_the_fallback_model(tmp_path):
    events, session, server = await play(
        [{"text": "Done."}], tmp_path, fault="529", max_retries=0, fallback_model="claude-sonnet-4-5"
    )
    assert sequence(events) == ["TurnStarted", "ContextProjected", "SystemMessageEvent", *ONE_REQUEST, "TurnEnded"]
    assert transitions(events) == ["start", "fallback_model"]
    refused, retried = server.recordings.messages
    assert (refused.status, retried.status) == (529, 200)
    assert refused.body["model"] != "claude-sonnet-4-5" and retried.body["model"] == "claude-sonnet-4-5"
    assert session.model == "claude-sonnet-4-5" and ended(events).reason == "completed"


async def test_a_request_refused_for_its_web_tools_is_sent_again_without_them(tmp_path):
    server = EmulatorServer(policy=ScriptPolicy({"steps": [{"text": "Done."}]}), web_tools_enabled=False)
    events, _, _ = await play([], tmp_path, server=server)
    assert sequence(events) == ["TurnStarted", "ContextProjected", "SystemMessageEvent", *ONE_REQUEST, "TurnEnded"]
    assert transitions(events) == ["start", "web_tools_off_retry"]
    assert [e.status for e in server.recordings.messages] == [400, 200]


async def test_prompt_too_long_drains_collapses_and_sends_again(tmp_path):
    steps = [{"tools": [BASH]}, {"text": "Read it. " * 200}, {"text": "Done."}]
    events, _, server = await play(steps, tmp_path, fault="prompt_too_long", before=["read"], context_strategy="collapse")
    assert sequence(events) == ["TurnStarted", "ContextProjected", *ONE_REQUEST, "TurnEnded"]
    assert transitions(events) == ["start", "collapse_drain_retry"]
    assert [e.status for e in server.recordings.messages][-2:] == [400, 200]


async def test_prompt_too_long_compacts_once_and_sends_again(tmp_path):
    steps = [{"tools": [BASH]}, {"text": "Read it. " * 200}, {"text": "Done."}]
    events, session, _ = await play(steps, tmp_path, fault="prompt_too_long", before=["read"], api_compaction=False)
    assert sequence(events) == [
        "TurnStarted", "ContextProjected",
        # The boundary, then the request again over the compacted view.
        "CompactionStarted", "SystemMessageEvent", "CompactionFinished",
        *ONE_REQUEST, "TurnEnded",
    ]
    assert transitions(events) == ["start", "reactive_compact_retry"]
    assert [e.trigger for e in events if hasattr(e, "trigger")] == ["reactive", "reactive"]


async def test_a_view_over_the_autocompact_threshold_is_compacted_before_it_is_sent(tmp_path):
    steps = [{"text": "Noted. " * 600}, {"text": "Done."}]
    events, _, _ = await play(
        steps, tmp_path, before=["remember this: " + "words " * 600], autocompact=True, context_window=8_000,
        api_compaction=False,
    )
    assert sequence(events) == [
        "TurnStarted", "CompactionStarted", "SystemMessageEvent", "CompactionFinished", *ONE_REQUEST, "TurnEnded",
    ]
    assert transitions(events) == ["start"]


async def test_a_view_over_the_blocking_limit_is_not_sent(tmp_path):
    events, session, server = await play([{"text": "Done."}], tmp_path, context_window=1_000)
    assert sequence(events) == ["TurnStarted", "AssistantMessageEvent", "ErrorEvent", "TurnEnded"]
    assert transitions(events) == [] and not server.recordings.messages
    assert ended(events).reason == "error" and ended(events).num_requests == 0
    assert isinstance(session.messages[-1], AssistantMessage) and session.messages[-1].is_synthetic


async def test_a_stop_hook_sends_the_model_back(tmp_path):
    body = 'if not data["stop_hook_active"]:\n    print(json.dumps({"decision": "block", "reason": "test it"}))\n'
    hooks = hooks_setting("Stop", hook_script(tmp_path / "hooks", "stop", body))
    events, _, _ = await play([{"text": "Done."}, {"text": "Tested."}], tmp_path, hooks=hooks)
    assert sequence(events) == [
        "TurnStarted", *ONE_REQUEST, "SystemMessageEvent", "LoopContinued", *ONE_REQUEST, "SystemMessageEvent", "TurnEnded",
    ]
    assert transitions(events) == ["start", "stop_hook_blocking"]
    assert ended(events).reason == "completed"


async def test_a_stop_hook_that_says_stop_ends_the_turn(tmp_path):
    body = 'print(json.dumps({"continue": False, "stopReason": "enough"}))\n'
    hooks = hooks_setting("Stop", hook_script(tmp_path / "hooks", "stop", body))
    events, _, _ = await play([{"text": "Done."}], tmp_path, hooks=hooks)
    assert sequence(events) == ["TurnStarted", *ONE_REQUEST, "SystemMessageEvent", "TurnEnded"]
    assert ended(events).reason == "hook_stopped"


async def test_a_tool_hook_that_says_stop_ends_the_turn_after_the_results(tmp_path):
    body = 'print(json.dumps({"continue": False, "stopReason": "no more tools"}))\n'
    hooks = hooks_setting("PostToolUse", hook_script(tmp_path / "hooks", "post", body))
    events, _, _ = await play([{"tools": [BASH]}, {"text": "never sent"}], tmp_path, hooks=hooks)
    assert sequence(events) == ["TurnStarted", *TOOL_REQUEST, "SystemMessageEvent", "TurnEnded"]
    assert events[-2].message.content == "no more tools"
    assert ended(events).reason == "hook_stopped"


async def test_a_prompt_hook_that_refuses_ends_the_turn_before_any_request(tmp_path):
    body = 'print(json.dumps({"decision": "block", "reason": "not that"}))\n'
    hooks = hooks_setting("UserPromptSubmit", hook_script(tmp_path / "hooks", "prompt", body))
    events, _, server = await play([{"text": "never sent"}], tmp_path, hooks=hooks)
    assert sequence(events) == ["SystemMessageEvent", "TurnEnded"]
    assert ended(events).reason == "hook_stopped" and ended(events).num_requests == 0
    assert not server.recordings.messages


async def test_an_unspent_output_budget_sends_the_model_back(tmp_path):
    events, _, _ = await play([{"text": "Part one."}], tmp_path, max_output_budget=1_000_000)
    one = ["ContextProjected", "TextDelta", "UsageEvent", "TokenBudgetProgress", "AssistantMessageEvent"]
    # Sent back three times, then stopped as its replies added too little (diminishing returns).
    assert sequence(events) == ["TurnStarted", *[*one, "LoopContinued"] * 3, *one, "TurnEnded"]
    assert transitions(events) == ["start", *["token_budget_continuation"] * 3]
    assert ended(events).reason == "completed"


async def test_max_turns_ends_after_tool_results(tmp_path):
    events, _, _ = await play([{"tools": [BASH]}, {"text": "Done."}], tmp_path, max_turns=1)
    assert sequence(events) == ["TurnStarted", *TOOL_REQUEST, "TurnEnded"]
    assert ended(events).reason == "max_turns"


def interrupt_on(kind: type) -> Callable[[Any, AgentEvent], None]:
    def hook(session: Any, event: AgentEvent) -> None:
        if isinstance(event, kind):
            session.interrupt()

    return hook


async def test_an_interrupted_stream_keeps_what_was_shown(tmp_path):
    server = EmulatorServer(policy=ScriptPolicy({"steps": [{"text": "A reply that stalls half way through."}]}))
    server.faults.stall_seconds = 30
    events, session, _ = await play([], tmp_path, server=server, fault="stall", on_event=interrupt_on(TextDelta))
    assert sequence(events) == ["TurnStarted", "ContextProjected", "TextDelta", "AssistantMessageEvent", "TurnEnded"]
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    partial, marker = session.messages[-2:]
    assert isinstance(partial, AssistantMessage) and partial.is_synthetic and partial.text() == shown
    assert isinstance(marker, UserMessage) and marker.content == "[Request interrupted by user]"
    assert ended(events).reason == "interrupted" and ended(events).final_text == shown


async def test_an_interrupted_retry_delay_ends_the_turn(tmp_path):
    from agent_repl.core.model.events import RequestRetry

    events, session, _ = await play(
        [{"text": "Done."}], tmp_path, fault="stream_error", max_retries=0, on_event=interrupt_on(RequestRetry)
    )
    assert sequence(events) == ["TurnStarted", "ContextProjected", "TextDelta", "RequestRetry", "AssistantMessageEvent", "TurnEnded"]
    assert session.messages[-1].content == "[Request interrupted by user]"
    assert ended(events).reason == "interrupted" and ended(events).num_requests == 1


async def test_interrupted_tool_calls_end_the_turn(tmp_path):
    from agent_repl.core.model.events import ToolUseStarted

    steps = [{"tools": [{"name": "Bash", "input": {"command": "sleep 30"}}]}]
    events, session, _ = await play(steps, tmp_path, on_event=interrupt_on(ToolUseStarted))
    # The reply is kept; the call's result says it was stopped.
    assert sequence(events) == ["TurnStarted", *TOOL_REQUEST, "TurnEnded"]
    result, marker = session.messages[-2:]
    assert isinstance(result, UserMessage) and "stopped before it finished" in result.tool_results()[0].text()
    assert marker.content == "[Request interrupted by user for tool use]"
    assert ended(events).reason == "interrupted" and ended(events).num_requests == 1
