"""Engine.respond/commit/completed: shaping replies, output tokens, metering, diagnostics."""

from __future__ import annotations

from typing import Any

import pytest

from agent_repl.core.model.tokens import NEW_TOKENIZER_RATIO
from agent_repl.emulator.cache import CacheUsage
from agent_repl.emulator.diagnostics import CACHE_DIAGNOSIS_BETA
from agent_repl.emulator.engine import Completion, Engine, Prepared
from agent_repl.emulator.metering import input_cost, prices
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import CallablePolicy, PolicyRequest, Reply
from agent_repl.emulator.request_error import EmulatorRequestError
from agent_repl.emulator.signatures import signature_matches, signature_tokens
from agent_repl.emulator.tokens import TokenCounter

from .genuine import genuine

COUNTER = TokenCounter(NEW_TOKENIZER_RATIO)
LONG_TEXT = "This answer goes on and on without end. " * 40


def engine_answering(content: list[dict[str, Any]], stop_reason: str = "end_turn", **kwargs: Any) -> Engine:
    return Engine(
        default_model_table(),
        CallablePolicy(lambda r: Reply(content, stop_reason)),
        clock=lambda: 50.0,
        **kwargs,
    )


def request(model: str = "claude-sonnet-5-5", **extra: Any) -> dict[str, Any]:
    return {
        "model": model,
        "max_tokens": 1_000,
        "messages": [{"role": "user", "content": "Hello there"}],
        **extra,
    }


def answer(
    engine: Engine, body: dict[str, Any], betas: set[str] | None = None
) -> tuple[Prepared, Completion]:
    prepared = engine.prepare(body, api_key="k", betas=betas or set(), request_index=0)
    completion = engine.respond(prepared)
    engine.commit(prepared)
    engine.completed(prepared, completion)
    return prepared, completion


def test_plain_reply_counts_output_tokens() -> None:
    _, completion = answer(engine_answering([{"type": "text", "text": "Hi!"}]), request())
    assert completion.content == [{"type": "text", "text": "Hi!"}]
    assert completion.stop_reason == "end_turn"
    assert completion.output_tokens == COUNTER.count_text("Hi!")
    assert completion.usage["output_tokens"] == completion.output_tokens
    assert completion.usage["output_tokens_details"] == {"thinking_tokens": 0}


def test_max_tokens_truncates_and_drops_what_does_not_fit() -> None:
    engine = engine_answering(
        [
            {"type": "text", "text": LONG_TEXT},
            {"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": {"command": "ls"}},
        ],
        "tool_use",
    )
    # Haiku 5.5 returns text between tool calls as text (Sonnet 5.5 would make it thinking).
    _, completion = answer(engine, request("claude-haiku-5-5", max_tokens=20))
    assert completion.stop_reason == "max_tokens"
    assert [b["type"] for b in completion.content] == ["text"]
    assert LONG_TEXT.startswith(completion.content[0]["text"])
    assert 0 < completion.output_tokens <= 20


def test_max_tokens_zero_prewarms_without_asking_the_policy() -> None:
    asked: list[PolicyRequest] = []

    def policy(req: PolicyRequest) -> Reply:
        asked.append(req)
        return Reply([{"type": "text", "text": "x"}])

    engine = Engine(default_model_table(), CallablePolicy(policy), clock=lambda: 1.0)
    system = [{"type": "text", "text": "cache me " * 600, "cache_control": {"type": "ephemeral"}}]
    prepared, completion = answer(engine, request(max_tokens=0, system=system))
    assert (completion.content, completion.stop_reason, completion.output_tokens) == ([], "max_tokens", 0)
    assert asked == []
    assert prepared.usage["cache_creation_input_tokens"] > 0
    again = engine.prepare(request(max_tokens=10, system=system), api_key="k", betas=set(), request_index=1)
    assert again.usage["cache_read_input_tokens"] == prepared.usage["cache_creation_input_tokens"]


def test_stop_sequence_cuts_the_text() -> None:
    engine = engine_answering([{"type": "text", "text": "one two STOP three"}])
    _, completion = answer(engine, request(stop_sequences=["STOP"]))
    assert completion.content == [{"type": "text", "text": "one two "}]
    assert (completion.stop_reason, completion.stop_sequence) == ("stop_sequence", "STOP")


def test_generation_that_reaches_the_window_stops_with_model_context_window_exceeded() -> None:
    engine = engine_answering([{"type": "text", "text": LONG_TEXT}], context_window=30)
    prepared, completion = answer(engine, request(max_tokens=500))
    assert engine.window_for(prepared.spec) == 30
    assert completion.stop_reason == "model_context_window_exceeded"
    assert completion.output_tokens <= 30 - prepared.total_input_tokens


def test_thinking_is_signed_and_omitted_by_default_on_opus_5_5() -> None:
    thinking = {"type": "thinking", "thinking": "Let me think about it carefully.", "signature": ""}
    engine = engine_answering([thinking, {"type": "text", "text": "Done."}])
    _, completion = answer(engine, request(model="claude-opus-5-5"))
    block = completion.content[0]
    assert block["thinking"] == ""
    cost = COUNTER.count_text(thinking["thinking"])
    assert signature_tokens(block["signature"]) == cost
    assert signature_matches("claude-opus-5-5", thinking["thinking"], block["signature"])
    assert completion.usage["output_tokens_details"] == {"thinking_tokens": cost}
    assert completion.output_tokens == cost + COUNTER.count_text("Done.")

    _, shown = answer(
        engine, request(model="claude-opus-5-5", thinking={"type": "adaptive", "display": "summarized"})
    )
    assert shown.content[0]["thinking"] == thinking["thinking"]
    assert shown.content[0]["signature"] == block["signature"]


def test_thinking_is_dropped_when_the_request_has_it_off() -> None:
    thinking = {"type": "thinking", "thinking": "hmm", "signature": ""}
    engine = engine_answering([thinking, {"type": "text", "text": "Done."}])
    _, completion = answer(engine, request(model="claude-sonnet-4-5"))  # extended thinking, off by default
    assert [b["type"] for b in completion.content] == ["text"]
    _, enabled = answer(
        engine, request(model="claude-sonnet-4-5", thinking={"type": "enabled", "budget_tokens": 1024})
    )
    assert [b["type"] for b in enabled.content] == ["thinking", "text"]


def test_unknown_model_is_a_404() -> None:
    with pytest.raises(EmulatorRequestError) as caught:
        engine_answering([]).prepare(request(model="claude-nope"), api_key="k", betas=set(), request_index=0)
    assert (caught.value.status, caught.value.error_type, caught.value.message) == (
        404,
        "not_found_error",
        "model: claude-nope",
    )


def test_usage_totals_and_cost_arithmetic() -> None:
    engine = engine_answering([{"type": "text", "text": "ok"}])
    system = [
        {"type": "text", "text": "stable prefix " * 800, "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    ]
    first, c1 = answer(engine, request(model="claude-opus-5-5", system=system))
    second, c2 = answer(engine, request(model="claude-opus-5-5", system=system))
    third, c3 = answer(engine, request(model="claude-sonnet-4-5"))
    s = first.usage["cache_creation"]["ephemeral_1h_input_tokens"]
    tail = first.usage["input_tokens"]
    assert s > 0 and second.usage["cache_read_input_tokens"] == s
    totals = engine.usage_totals()
    opus = totals["by_model"]["claude-opus-5-5"]
    assert opus == {
        "requests": 2,
        "input_tokens": 2 * tail,
        "cache_write_5m_tokens": 0,
        "cache_write_1h_tokens": s,
        "cache_read_tokens": s,
        "output_tokens": c1.output_tokens + c2.output_tokens,
        "cost_usd": pytest.approx(
            (2 * tail * 4 + s * 4 * 2 + s * 4 * 0.05 + (c1.output_tokens + c2.output_tokens) * 20) / 1e6
        ),
    }
    sonnet_cost = (third.usage["input_tokens"] * 3 + c3.output_tokens * 15) / 1e6
    assert totals["requests"] == 3
    assert totals["cost_usd"] == pytest.approx(opus["cost_usd"] + sonnet_cost)


def test_input_is_metered_once_per_commit() -> None:
    engine = engine_answering([{"type": "text", "text": "ok"}])
    prepared = engine.prepare(request(), api_key="k", betas=set(), request_index=0)
    engine.commit(prepared)
    engine.commit(prepared)
    assert engine.usage_totals()["requests"] == 1


def test_uncommitted_requests_are_not_billed() -> None:
    engine = engine_answering([{"type": "text", "text": "ok"}])
    engine.prepare(request(), api_key="k", betas=set(), request_index=0)
    assert engine.usage_totals()["requests"] == 0


def diagnosed(engine: Engine, body: dict[str, Any], previous: str | None) -> Prepared:
    return engine.prepare(
        {**body, "diagnostics": {"previous_message_id": previous}},
        api_key="k",
        betas={CACHE_DIAGNOSIS_BETA},
        request_index=0,
    )


def test_cache_miss_diagnostics() -> None:
    engine = engine_answering([{"type": "text", "text": "ok"}])
    base = request(system="You are helpful. " * 100)
    first = diagnosed(engine, base, None)
    assert first.diagnostics_requested and first.diagnostics is None
    engine.commit(first, message_id="msg_from_server")

    grown = {
        **base,
        "messages": [
            *base["messages"],
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "more"},
        ],
    }
    assert diagnosed(engine, grown, "msg_from_server").diagnostics is None

    changed = {**base, "system": "You are terse. " * 100}
    reason = diagnosed(engine, changed, "msg_from_server").diagnostics
    assert reason == {
        "cache_miss_reason": {"type": "system_changed", "cache_missed_input_tokens": first.total_input_tokens}
    }

    edited = {**base, "messages": [{"role": "user", "content": "Hello here"}]}
    reason = diagnosed(engine, edited, "msg_from_server").diagnostics
    hello = COUNTER.count_text("Hello there")
    assert reason == {"cache_miss_reason": {"type": "messages_changed", "cache_missed_input_tokens": hello}}

    other_model = diagnosed(engine, {**base, "model": "claude-opus-5-5"}, "msg_from_server").diagnostics
    assert other_model is not None and other_model["cache_miss_reason"]["type"] == "model_changed"
    params = diagnosed(engine, {**base, "tool_choice": {"type": "none"}}, "msg_from_server").diagnostics
    assert params == {"cache_miss_reason": {"type": "unavailable"}}
    unknown = diagnosed(engine, base, "msg_unknown").diagnostics
    assert unknown == {"cache_miss_reason": {"type": "previous_message_not_found"}}


def test_diagnostics_absent_without_the_beta() -> None:
    engine = engine_answering([{"type": "text", "text": "ok"}])
    prepared = engine.prepare(
        {**request(), "diagnostics": {"previous_message_id": None}}, api_key="k", betas=set(), request_index=0
    )
    assert not prepared.diagnostics_requested


def test_haiku_5_5_bills_large_prompts_at_its_upper_tier() -> None:
    haiku = default_model_table()["claude-haiku-5-5"]
    assert prices(haiku, 100_000) == (0.10, 0.50)
    assert prices(haiku, 100_001) == (0.50, 2.50)
    usage = CacheUsage(
        input_tokens=1_000,
        cache_read_input_tokens=2_000,
        ephemeral_5m_input_tokens=400,
        ephemeral_1h_input_tokens=0,
    )
    assert input_cost(haiku, usage, 150_000) == pytest.approx((1_000 + 400 * 1.25 + 2_000 * 0.1) * 0.50 / 1e6)


def test_models_that_strip_old_thinking_do_not_see_or_bill_it() -> None:
    thought = {"type": "thinking", "thinking": "old reasoning " * 50, "signature": "sig"}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": [thought, {"type": "text", "text": "answer"}]},
        {"role": "user", "content": "second"},
    ]
    engine = engine_answering([{"type": "text", "text": "ok"}])
    # Made by Opus 5.5: it keeps it; Sonnet 4.5 strips old thinking anyway (and cannot read this block).
    messages = genuine(request(messages=messages), "claude-opus-5-5")["messages"]
    stripped = engine.prepare(
        request(model="claude-sonnet-4-5", messages=messages), api_key="k", betas=set(), request_index=0
    )
    kept = engine.prepare(
        request(model="claude-opus-5-5", messages=messages), api_key="k", betas=set(), request_index=1
    )
    assert [b["type"] for b in stripped.visible_body["messages"][1]["content"]] == ["text"]
    assert kept.total_input_tokens - stripped.total_input_tokens == COUNTER.count_text(thought["thinking"])
