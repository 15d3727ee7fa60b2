"""Preserved thinking as the docs describe it: blocks bound to their model and prefix, the 400,
`drop_block` with `input_transformations`, and on-demand compaction keeping kept turns valid."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agent_repl.emulator.engine import Completion, Engine, Prepared
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import CallablePolicy, Reply
from agent_repl.emulator.request_error import EmulatorRequestError
from agent_repl.emulator.thinking_binding import THINKING_BINDING_BETA

from .genuine import genuine

SONNET = "claude-sonnet-5-5"
SYSTEM = [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
TOOLS = [{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}}]
DROP = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
COMPACT_BETA = "compact-2026-09-04"


def engine(reply: list[dict[str, Any]] | None = None, **options: Any) -> Engine:
    content = reply or [{"type": "thinking", "thinking": "Let me see.", "signature": ""}, {"type": "text", "text": "ok"}]
    return Engine(default_model_table(), CallablePolicy(lambda r: Reply(content)), clock=lambda: 1.0, **options)


def body(messages: list[dict[str, Any]], model: str = SONNET, **extra: Any) -> dict[str, Any]:
    return {"model": model, "max_tokens": 500, "system": SYSTEM, "tools": TOOLS, "messages": messages, **extra}


def send(e: Engine, request: dict[str, Any], betas: set[str] | None = None) -> tuple[Prepared, Completion]:
    prepared = e.prepare(request, api_key="k", betas=betas or set(), request_index=0)
    completion = e.respond(prepared)
    e.commit(prepared)
    e.completed(prepared, completion)
    return prepared, completion


def conversation() -> list[dict[str, Any]]:
    """Two turns that each thought, then a new prompt."""
    return [
        {"role": "user", "content": [{"type": "text", "text": "Where is the config?"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Probably in etc."}, {"type": "text", "text": "In etc/."}]},
        {"role": "user", "content": [{"type": "text", "text": "And the logs?"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Look in var."}, {"type": "text", "text": "In var/log."}]},
        {"role": "user", "content": [{"type": "text", "text": "Thanks. Anything else?"}]},
    ]


def signed() -> dict[str, Any]:
    return genuine(body(conversation()), SONNET)


def test_an_unchanged_history_keeps_every_thinking_block() -> None:
    prepared, _ = send(engine(), signed())
    kinds = [[b["type"] for b in m["content"]] for m in prepared.visible_body["messages"]]
    assert kinds[1] == ["thinking", "text"] and kinds[3] == ["thinking", "text"]


def test_a_reply_from_the_emulator_goes_back_valid_turn_after_turn() -> None:
    e = engine()
    messages = conversation()[:1]
    for turn in range(3):
        _, completion = send(e, body(messages))
        messages = [*messages, {"role": "assistant", "content": completion.content}]
        messages.append({"role": "user", "content": [{"type": "text", "text": f"next {turn}"}]})
    prepared, _ = send(e, body(messages))
    assert sum(b["type"] == "thinking" for m in prepared.visible_body["messages"] for b in m["content"]) == 3


def test_a_changed_message_before_a_block_is_the_documented_400() -> None:
    request = signed()
    request["messages"][0]["content"][0]["text"] = "Where is the config file?"
    with pytest.raises(EmulatorRequestError) as caught:
        send(engine(), request)
    assert caught.value.message == (
        "messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a different "
        'conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block". '
        "That setting requires the `thinking-binding-controls-2026-08-01` value in the `anthropic-beta` header. "
        "A message before this block differs from the conversation this block was created in."
    )


def test_a_changed_system_prompt_says_so() -> None:
    request = signed()
    request["system"] = [{"type": "text", "text": "You are verbose."}]
    with pytest.raises(EmulatorRequestError, match="The `system` prompt differs from the one this block was created with."):
        send(engine(), request)


def test_cache_markers_and_merged_messages_do_not_count_as_changes() -> None:
    messages = conversation()
    messages[0]["content"].append({"type": "text", "text": "It is urgent."})
    request = genuine(body(messages), SONNET)
    request["messages"][2]["content"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    # The first user message sent as two: the API merges consecutive same-role messages.
    first, second = request["messages"][0]["content"]
    request["messages"][0:1] = [{"role": "user", "content": [first]}, {"role": "user", "content": [second]}]
    prepared, _ = send(engine(), request)
    assert prepared.visible_body["messages"][2]["content"][0]["type"] == "thinking"
    assert prepared.visible_body["messages"][4]["content"][0]["type"] == "thinking"


def test_drop_block_drops_the_failing_block_and_every_later_one_and_lists_them() -> None:
    request = signed()
    request["messages"][2]["content"][0]["text"] = "And the log files?"  # after block 1, before block 3
    request["thinking"] = DROP
    with pytest.raises(EmulatorRequestError, match="thinking.block_binding"):
        send(engine(), copy.deepcopy(request))  # the setting needs its beta
    prepared, completion = send(engine(), request, {THINKING_BINDING_BETA})
    kinds = [[b["type"] for b in m["content"]] for m in prepared.visible_body["messages"]]
    assert kinds[1] == ["thinking", "text"] and kinds[3] == ["text"]
    assert prepared.input_transformations == [
        {"type": "thinking_dropped", "path": "messages.3.content.0", "reason": "prefix_binding_mismatch"}
    ]
    assert completion.stop_reason == "end_turn"


def test_a_block_another_model_made_is_dropped_without_an_error() -> None:
    request = genuine(body(conversation()), "claude-opus-5-5")
    prepared, _ = send(engine(), request, {THINKING_BINDING_BETA})
    assert all(b["type"] != "thinking" for m in prepared.visible_body["messages"] for b in m["content"])
    assert {t["reason"] for t in prepared.input_transformations or []} == {"model_binding_mismatch"}


def test_a_signature_nobody_made_is_refused() -> None:
    request = signed()
    request["messages"][1]["content"][0]["signature"] = "ErUBCkYIBRgCIkD-not-ours"
    with pytest.raises(EmulatorRequestError) as caught:
        send(engine(), request)
    assert caught.value.message == "messages.1.content.0: Invalid `signature` in `thinking` block"


def test_an_older_account_lets_a_changed_prefix_through_unless_asked() -> None:
    request = signed()
    request["messages"][0]["content"][0]["text"] = "Where is the config file?"
    prepared, _ = send(engine(thinking_prefix_enforced=False), request, {THINKING_BINDING_BETA})
    assert [t["type"] for t in prepared.input_transformations or []] == ["thinking_mismatch_allowed"] * 2
    request["thinking"] = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "error"}}
    with pytest.raises(EmulatorRequestError, match="bound to a different conversation"):
        send(engine(thinking_prefix_enforced=False), request, {THINKING_BINDING_BETA})


def test_sonnet_5_5_thinks_by_default_shows_nothing_and_returns_text_between_tool_calls_as_thinking() -> None:
    reply = [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": "ls"}},
    ]
    _, completion = send(engine(reply), body(conversation()[:1]))
    assert [b["type"] for b in completion.content] == ["thinking", "tool_use"]
    assert completion.content[0]["thinking"] == ""  # display omitted unless asked
    _, shown = send(engine(reply), body(conversation()[:1], thinking={"type": "adaptive", "display": "summarized"}))
    assert shown.content[0]["thinking"] == "Let me look."
    _, haiku = send(engine(reply), body(conversation()[:1], model="claude-haiku-5-5"))
    assert [b["type"] for b in haiku.content] == ["text", "tool_use"]


def test_clear_thinking_without_thinking_on_is_refused() -> None:
    request = body(conversation()[:1], model="claude-sonnet-4-5")
    request["context_management"] = {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}
    with pytest.raises(EmulatorRequestError, match="requires thinking to be enabled"):
        send(engine(), request, {"context-management-2025-06-27"})
    request["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    send(engine(), request, {"context-management-2025-06-27"})


# On-demand compaction


def test_on_demand_compaction_answers_one_signed_block() -> None:
    request = signed()
    request["compaction"] = {"type": "summarize"}
    with pytest.raises(EmulatorRequestError, match=COMPACT_BETA):
        send(engine(), copy.deepcopy(request))
    _, completion = send(engine(), request, {COMPACT_BETA})
    assert completion.stop_reason == "compaction" and completion.reply is None
    [block] = completion.content
    assert block["type"] == "compaction" and block["signature"].startswith("EmuCmp1")
    assert "Where is the config?" in block["content"] and "Thanks. Anything else?" in block["content"]


def test_on_demand_compaction_is_refused_where_the_docs_say_so() -> None:
    request = signed()
    request["compaction"] = {"type": "summarize"}
    request["context_management"] = {"edits": []}
    with pytest.raises(EmulatorRequestError, match="cannot be combined"):
        send(engine(), request, {COMPACT_BETA, "context-management-2025-06-27"})
    legacy = body(conversation()[:1], model="claude-sonnet-4-5", compaction={"type": "summarize"})
    with pytest.raises(EmulatorRequestError, match="not supported"):
        send(engine(), legacy, {COMPACT_BETA})


def kept_after_compaction(model: str = SONNET) -> tuple[Engine, dict[str, Any], list[dict[str, Any]]]:
    """Turn 1 is summarized by the API; turn 2 (with its thinking) is kept after the block."""
    full = genuine(body(conversation(), model), model)
    summarized = full["messages"][:2]
    e = engine()
    _, completion = send(e, {**full, "messages": summarized, "compaction": {"type": "summarize"}}, {COMPACT_BETA})
    compacted = [{"role": "assistant", "content": completion.content}, *full["messages"][2:]]
    return e, full, compacted


def test_turns_kept_after_an_api_summary_keep_their_thinking() -> None:
    e, full, compacted = kept_after_compaction()
    prepared, _ = send(e, {**full, "messages": compacted})
    kinds = [[b["type"] for b in m["content"]] for m in prepared.visible_body["messages"]]
    assert kinds == [["compaction"], ["text"], ["thinking", "text"], ["text"]]


def test_a_kept_turn_changed_after_the_summary_fails_the_check() -> None:
    e, full, compacted = kept_after_compaction()
    compacted[1]["content"][0]["text"] = "And the log files?"
    with pytest.raises(EmulatorRequestError, match="bound to a different conversation"):
        send(e, {**full, "messages": compacted})


def test_a_client_summary_in_place_of_the_block_fails_the_check() -> None:
    e, full, compacted = kept_after_compaction()
    ours = {"role": "user", "content": [{"type": "text", "text": "Summary: the config is in etc/."}]}
    with pytest.raises(EmulatorRequestError, match="bound to a different conversation"):
        send(e, {**full, "messages": [ours, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}, *compacted[1:]]})


def test_a_compaction_block_must_come_first_and_keep_its_signature() -> None:
    e, full, compacted = kept_after_compaction()
    forged = copy.deepcopy(compacted)
    forged[0]["content"][0]["content"] += " (edited)"
    with pytest.raises(EmulatorRequestError, match="Invalid `signature` in `compaction` block"):
        send(e, {**full, "messages": forged})
    moved = [conversation()[0], {"role": "assistant", "content": compacted[0]["content"]}, *compacted[1:]]
    with pytest.raises(EmulatorRequestError, match="must be the first block"):
        send(e, {**full, "messages": moved})


def test_the_sdk_round_trips_an_on_demand_compaction_over_http(client, use_policy) -> None:
    use_policy(lambda request: Reply([{"type": "thinking", "thinking": "Fine.", "signature": ""}, {"type": "text", "text": "ok"}]))
    first = client.messages.create(model=SONNET, max_tokens=200, messages=[{"role": "user", "content": "Hello"}])
    history = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]}]
    with client.beta.messages.stream(
        model=SONNET, max_tokens=200, messages=history, compaction={"type": "summarize"}, betas=[COMPACT_BETA]
    ) as stream:
        compacted = stream.get_final_message()
    assert compacted.stop_reason == "compaction"
    [block] = compacted.content
    assert block.type == "compaction" and block.content and block.signature
    later = [
        {"role": "assistant", "content": [block.model_dump(exclude_none=True)]},
        {"role": "user", "content": "Go on."},
    ]
    reply = client.beta.messages.create(model=SONNET, max_tokens=200, messages=later, betas=[COMPACT_BETA])
    assert reply.stop_reason == "end_turn"
