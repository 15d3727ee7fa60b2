"""A refusal with a fallback model configured: the refused request is sent once to the fallback
model, as the refusal docs describe, and the screen says so; the refused reply stays in the
history, out of the model's view. Without a fallback (tests/e2e/test_stop_reasons.py) the turn
ends with the refusal, as before."""

from __future__ import annotations

import json
from typing import Any

from agent_repl.core.model.events import ContextProjected, ErrorEvent, SystemMessageEvent, TurnEnded
from agent_repl.core.model.messages import AssistantMessage

from .conftest import agent_env, run_agent
from .test_stop_reasons import bodies, ended, play

FALLBACK = "claude-sonnet-4-5"
REFUSED = {"text": "Here is how you", "stop_reason": "refusal", "stop_details": {"category": "cyber"}}


def warnings(events: list[Any]) -> list[str]:
    return [e.message.content for e in events if isinstance(e, SystemMessageEvent) and e.message.level == "warning"]


async def test_a_refused_request_is_sent_once_to_the_fallback_model_and_the_turn_goes_on(tmp_path):
    steps = [REFUSED, {"text": "Happy to help with that."}, {"text": "And the next one too."}]
    [first, second], session, server = await play(steps, tmp_path, "something refused", "go on", fallback_model=FALLBACK)
    assert ended(first).reason == "completed" and ended(first).final_text == "Happy to help with that."
    assert not any(isinstance(e, ErrorEvent) for e in first)
    [said] = warnings(first)
    assert "declined" in said and "cyber" in said and f"once on {FALLBACK}" in said
    assert [e.transition for e in first if isinstance(e, ContextProjected)] == ["start", "refusal_fallback"]
    refused, retried, later = bodies(server)
    # The same request, on the fallback model; the refused words are not sent back.
    assert refused["model"] == "claude-sonnet-5-5" and retried["model"] == FALLBACK
    assert retried["messages"] == refused["messages"] and retried["system"] == refused["system"]
    assert "Here is how you" not in json.dumps(retried) + json.dumps(later)
    # The next request goes to the session's model again.
    assert later["model"] == "claude-sonnet-5-5" and session.model == "claude-sonnet-5-5"
    replies = [m for m in session.messages if isinstance(m, AssistantMessage)]
    assert [(m.model, m.stop_reason) for m in replies] == [
        ("claude-sonnet-5-5", "refusal"), (FALLBACK, "end_turn"), ("claude-sonnet-5-5", "end_turn")
    ]


async def test_a_fallback_that_refuses_too_ends_the_turn_with_the_refusal(tmp_path):
    steps = [REFUSED, {"text": "No.", "stop_reason": "refusal"}]
    [events], _, server = await play(steps, tmp_path, "something refused", fallback_model=FALLBACK)
    assert ended(events).reason == "refusal"
    assert len(bodies(server)) == 2  # tried once, not again
    trying, declined = warnings(events)
    assert f"once on {FALLBACK}" in trying and declined.startswith(f"{FALLBACK} declined")
    assert any(isinstance(e, ErrorEvent) for e in events)
    assert isinstance(events[-1], TurnEnded)


def test_print_mode_takes_the_fallback_model_as_a_flag_and_says_so_on_stderr(emulator, project, home):
    emulated = emulator([REFUSED, {"text": "Happy to help with that."}])
    done = run_agent(
        ["-p", "something refused", "--fallback-model", FALLBACK, "--output-format", "json"],
        cwd=project,
        env=agent_env(emulated, home),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "Happy to help with that." and result["num_turns"] == 2
    assert f"once on {FALLBACK}" in done.stderr
    assert set(result["modelUsage"]) == {"claude-sonnet-5-5", FALLBACK}
    assert [b["model"] for b in emulated.bodies()] == ["claude-sonnet-5-5", FALLBACK]
