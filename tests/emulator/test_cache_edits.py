"""Cache editing (our `cache-editing-agent-repl` beta): delete old results, keep the cache."""

from __future__ import annotations

from typing import Any

import pytest

from agent_repl.core.model.tokens import NEW_TOKENIZER_RATIO
from agent_repl.emulator.cache_edits import CACHE_EDITING_BETA
from agent_repl.emulator.engine import Engine, Prepared
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import CallablePolicy, Reply
from agent_repl.emulator.request_error import EmulatorRequestError
from agent_repl.emulator.tokens import TokenCounter

BETAS = {CACHE_EDITING_BETA}
EPHEMERAL = {"type": "ephemeral"}


def make_engine() -> Engine:
    return Engine(
        default_model_table(),
        CallablePolicy(lambda r: Reply([{"type": "text", "text": "ok"}])),
        clock=lambda: 5_000.0,
        cache_editing=True,
    )


def output(n: int) -> str:
    return "\n".join(f"{n}: line {i} of some command output" for i in range(120))


def first_turns() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Look at the logs please"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_a", "name": "Bash", "input": {"command": "cat a"}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_a",
                    "cache_reference": "toolu_a",
                    "content": output(1),
                }
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_b", "name": "Bash", "input": {"command": "cat b"}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_b",
                    "cache_reference": "toolu_b",
                    "content": output(2),
                    "cache_control": EPHEMERAL,
                }
            ],
        },
    ]


def request(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": "claude-sonnet-5-5", "max_tokens": 100, "system": "You are terse.", "messages": messages}


def send(engine: Engine, body: dict[str, Any], betas: set[str] = BETAS) -> Prepared:
    prepared = engine.prepare(body, api_key="k", betas=betas, request_index=0)
    completion = engine.respond(prepared)
    engine.commit(prepared)
    engine.completed(prepared, completion)
    return prepared


def with_delete(
    messages: list[dict[str, Any]], text: str, reference: str = "toolu_a"
) -> list[dict[str, Any]]:
    return [
        *messages,
        {"role": "assistant", "content": [{"type": "text", "text": "Both logs look long."}]},
        {
            "role": "user",
            "content": [
                {"type": "cache_edits", "edits": [{"type": "delete", "cache_reference": reference}]},
                {"type": "text", "text": text, "cache_control": EPHEMERAL},
            ],
        },
    ]


def test_delete_keeps_the_rest_of_the_prefix_a_hit_and_reports_deleted_tokens() -> None:
    engine = make_engine()
    first = send(engine, request(first_turns()))
    assert first.usage["cache_creation_input_tokens"] == first.total_input_tokens
    assert first.usage["cache_deleted_input_tokens"] == 0

    second = send(engine, request(with_delete(first_turns(), "Now summarize.")))
    deleted = TokenCounter(NEW_TOKENIZER_RATIO).count_text(output(1))
    assert second.usage["cache_deleted_input_tokens"] == deleted
    # The whole old prefix reads from the cache, minus the deleted result's tokens.
    assert second.usage["cache_read_input_tokens"] == first.total_input_tokens - deleted
    assert second.total_input_tokens == (
        second.usage["cache_read_input_tokens"]
        + second.usage["cache_creation_input_tokens"]
        + second.usage["input_tokens"]
    )
    # The model sees the result without its content, and none of the bookkeeping.
    result = second.visible_body["messages"][2]["content"][0]
    assert result == {"type": "tool_result", "tool_use_id": "toolu_a"}
    last = second.visible_body["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["text"]


def test_pinned_edits_report_the_cumulative_deleted_count_and_stay_hits() -> None:
    engine = make_engine()
    send(engine, request(first_turns()))
    turn2 = with_delete(first_turns(), "Now summarize.")
    second = send(engine, request(turn2))
    turn3 = [
        *turn2,
        {"role": "assistant", "content": "Summary: two logs."},
        {"role": "user", "content": "Thanks"},
    ]
    turn3[-3]["content"][1] = {"type": "text", "text": "Now summarize."}  # the marker moves on
    turn3[-1] = {"role": "user", "content": [{"type": "text", "text": "Thanks", "cache_control": EPHEMERAL}]}
    third = send(engine, request(turn3))
    assert third.usage["cache_deleted_input_tokens"] == second.usage["cache_deleted_input_tokens"]
    assert third.usage["cache_read_input_tokens"] == second.total_input_tokens


def test_unknown_reference_is_a_400_with_a_clear_text() -> None:
    engine = make_engine()
    with pytest.raises(EmulatorRequestError) as caught:
        engine.prepare(
            request(with_delete(first_turns(), "go", reference="toolu_zzz")),
            api_key="k",
            betas=BETAS,
            request_index=0,
        )
    assert caught.value.status == 400
    assert caught.value.error_type == "invalid_request_error"
    assert caught.value.message == (
        "messages.6.content.0.edits.0.cache_reference: unknown cache_reference 'toolu_zzz': "
        "no tool_result in this request carries it"
    )


def test_without_the_beta_the_fields_are_extra_inputs() -> None:
    engine = make_engine()
    with pytest.raises(EmulatorRequestError) as caught:
        engine.prepare(request(first_turns()), api_key="k", betas=set(), request_index=0)
    assert caught.value.message == "messages.2.content.0.cache_reference: Extra inputs are not permitted"


def test_reference_must_equal_the_tool_use_id() -> None:
    messages = first_turns()
    messages[2]["content"][0]["cache_reference"] = "toolu_b"
    with pytest.raises(EmulatorRequestError, match="must equal the block's tool_use_id"):
        make_engine().prepare(request(messages), api_key="k", betas=BETAS, request_index=0)


def test_count_tokens_applies_the_deletes() -> None:
    engine = make_engine()
    plain = engine.count_tokens(request(first_turns()), betas=BETAS)["input_tokens"]
    edited = engine.count_tokens(request(with_delete(first_turns(), "go")), betas=BETAS)["input_tokens"]
    counter = TokenCounter(NEW_TOKENIZER_RATIO)
    extra = counter.count_text("Both logs look long.") + counter.count_text("go")
    assert edited == plain - counter.count_text(output(1)) + extra
