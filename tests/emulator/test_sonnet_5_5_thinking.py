"""Sonnet 5.5's documented thinking rules as the emulator plays them: progress notes between tool
calls come back as signed thinking, empty unless a display returns them; `between_tools` drops
up-front thinking and keeps the notes' text; what the model refuses is a 400."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from agent_repl.emulator.engine import Engine
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import CallablePolicy, Reply
from agent_repl.emulator.signatures import signature_matches

NOTE = "Reading the config next."
REPLY = [
    {"type": "thinking", "thinking": "Up-front reasoning about the task.", "signature": ""},
    {"type": "text", "text": NOTE},
    {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/x"}},
]


def engine() -> Engine:
    return Engine(default_model_table(), CallablePolicy(lambda r: Reply(REPLY, "tool_use")), clock=lambda: 50.0)


def respond(body_extra: dict[str, Any]) -> list[dict[str, Any]]:
    body = {"model": "claude-sonnet-5-5", "max_tokens": 2_000, "messages": [{"role": "user", "content": "go"}]}
    running = engine()
    prepared = running.prepare({**body, **body_extra}, api_key="k", betas=set(), request_index=0)
    return running.respond(prepared).content


def test_notes_between_tool_calls_are_thinking_empty_by_default_and_shown_with_a_display() -> None:
    quiet = respond({})
    assert [b["type"] for b in quiet] == ["thinking", "thinking", "tool_use"]
    assert [b["thinking"] for b in quiet[:2]] == ["", ""]
    assert all(b["signature"] for b in quiet[:2])

    shown = respond({"thinking": {"type": "adaptive", "display": "summarized"}})
    assert shown[1]["thinking"] == NOTE
    assert signature_matches("claude-sonnet-5-5", NOTE, shown[1]["signature"])


def test_between_tools_drops_up_front_thinking_and_keeps_the_notes_text() -> None:
    content = respond({"thinking": {"type": "between_tools"}})
    assert [b["type"] for b in content] == ["thinking", "tool_use"]
    assert content[0]["thinking"] == NOTE and content[0]["signature"]


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"thinking": {"type": "disabled"}}, '"thinking.type.disabled" is not supported for this model'),
        ({"thinking": {"type": "enabled", "budget_tokens": 1024}}, '"thinking.type.enabled" is not supported'),
        ({"tool_choice": {"type": "any"}}, 'tool_choice: type "tool" and "any" are not supported'),
        ({"tool_choice": {"type": "tool", "name": "Read"}}, 'tool_choice: type "tool" and "any" are not supported'),
        ({"thinking": {"type": "between_tools"}, "output_config": {"effort": "max"}}, '"between_tools" is available'),
        ({"thinking": {"type": "between_tools"}, "output_config": {"effort": "xhigh"}}, '"between_tools" is available'),
        ({"thinking": {"type": "between_tools", "display": "summarized"}}, "thinking.between_tools.display"),
        ({"temperature": 0.5}, "temperature: sampling parameters are not supported"),
        ({"top_p": 0.9}, "top_p: sampling parameters are not supported"),
    ],
)
def test_what_sonnet_5_5_refuses_is_a_400_over_http(client, extra: dict[str, Any], says: str) -> None:
    tools = [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}]
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(
            model="claude-sonnet-5-5",
            max_tokens=100,
            messages=[{"role": "user", "content": "go"}],
            tools=tools,
            extra_body=extra,
            timeout=30,
        )
    assert refused.value.status_code == 400
    assert says in refused.value.body["error"]["message"]


@pytest.mark.parametrize("effort", ["low", "medium", "high"])
def test_between_tools_is_accepted_up_to_effort_high(effort: str) -> None:
    content = respond({"thinking": {"type": "between_tools"}, "output_config": {"effort": effort}})
    assert content[0]["thinking"] == NOTE


def test_other_models_keep_sampling_parameters(client) -> None:
    reply = client.messages.create(
        model="claude-haiku-5-5", max_tokens=100, messages=[{"role": "user", "content": "go"}],
        extra_body={"temperature": 0.2},
    )
    assert reply.stop_reason == "end_turn"


def test_the_updates_display_returns_only_the_notes_text(client) -> None:
    # The reply's up-front thinking stays empty; the note before the tool call keeps its text.
    prepared = engine()
    request = prepared.prepare(
        {
            "model": "claude-sonnet-5-5",
            "max_tokens": 2_000,
            "messages": [{"role": "user", "content": "go"}],
            "thinking": {"type": "adaptive", "display": "updates"},
        },
        api_key="k",
        betas={"thinking-display-updates-2026-08-18"},
        request_index=0,
    )
    content = prepared.respond(request).content
    assert [b["thinking"] for b in content[:2]] == ["", NOTE]
    assert all("_progress_note" not in b for b in content)


def test_the_updates_display_needs_its_beta_over_http(client) -> None:
    ask = {"model": "claude-sonnet-5-5", "max_tokens": 100, "messages": [{"role": "user", "content": "go"}]}
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(**ask, extra_body={"thinking": {"type": "adaptive", "display": "updates"}}, timeout=30)
    assert refused.value.body["error"]["message"] == (
        "thinking.adaptive.display: Input should be 'summarized' or 'omitted'"
    )
    client.beta.messages.create(
        **ask,
        betas=["thinking-display-updates-2026-08-18"],
        extra_body={"thinking": {"type": "adaptive", "display": "updates"}},
        timeout=30,
    )
