"""Public context editing (§8.1): clear_tool_uses and clear_thinking, applied server-side."""

from __future__ import annotations

from typing import Any

import pytest

from agent_repl.core.model.tokens import NEW_TOKENIZER_RATIO
from agent_repl.emulator.context_edits import CLEARED_RESULT_TEXT, CONTEXT_MANAGEMENT_BETA
from agent_repl.emulator.engine import Engine, Prepared
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import CallablePolicy, Reply
from agent_repl.emulator.request_error import EmulatorRequestError
from agent_repl.emulator.tokens import TokenCounter

from .genuine import genuine

BETAS = {CONTEXT_MANAGEMENT_BETA}
EPHEMERAL = {"type": "ephemeral"}
COUNTER = TokenCounter(NEW_TOKENIZER_RATIO)
SYSTEM = [{"type": "text", "text": "System prompt. " * 200, "cache_control": EPHEMERAL}]


def make_engine() -> Engine:
    return Engine(
        default_model_table(),
        CallablePolicy(lambda r: Reply([{"type": "text", "text": "ok"}])),
        clock=lambda: 1.0,
    )


def output(n: int) -> str:
    return "\n".join(f"result {n} row {i}" for i in range(80))


def tool_loop(names: list[str]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Investigate."}]
    for i, name in enumerate(names):
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": {"arg": f"v{i}"}}
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": output(i)}],
            }
        )
    messages[-1]["content"][-1]["cache_control"] = EPHEMERAL
    return messages


def request(messages: list[dict[str, Any]], edits: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 100,
        "system": SYSTEM,
        "messages": messages,
    }
    if edits is not None:
        body["context_management"] = {"edits": edits}
    return genuine(body, body["model"])


def send(engine: Engine, body: dict[str, Any]) -> Prepared:
    prepared = engine.prepare(body, api_key="k", betas=BETAS, request_index=0)
    completion = engine.respond(prepared)
    engine.commit(prepared)
    engine.completed(prepared, completion)
    return prepared


def placeholder_savings(n: int) -> int:
    return COUNTER.count_text(output(n)) - COUNTER.count_text(CLEARED_RESULT_TEXT)


def test_clear_tool_uses_reports_applied_edits_and_rewrites_old_results() -> None:
    edit = {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": 100},
        "keep": {"type": "tool_uses", "value": 1},
    }
    prepared = send(make_engine(), request(tool_loop(["Bash", "Read", "Grep"]), [edit]))
    assert prepared.applied_edits == [
        {
            "type": "clear_tool_uses_20250919",
            "cleared_tool_uses": 2,
            "cleared_input_tokens": placeholder_savings(0) + placeholder_savings(1),
        }
    ]
    results = [m["content"][0] for m in prepared.visible_body["messages"] if m["role"] == "user"][1:]
    assert [r["content"] for r in results] == [CLEARED_RESULT_TEXT, CLEARED_RESULT_TEXT, output(2)]


def test_clearing_misses_the_cache_from_the_clear_point() -> None:
    engine = make_engine()
    messages = tool_loop(["Bash", "Read", "Grep"])
    messages[1]["content"][0]["cache_control"] = EPHEMERAL  # an entry just before the first result
    first = send(engine, request(messages))
    edit = {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "tool_uses", "value": 2},
        "keep": {"type": "tool_uses", "value": 1},
    }
    cleared = send(engine, request(messages, [edit]))
    through_first_use = (
        COUNTER.count_text("System prompt. " * 200)
        + COUNTER.count_text("Investigate.")
        + COUNTER.count_block(messages[1]["content"][0])
    )
    assert cleared.usage["cache_read_input_tokens"] == through_first_use
    assert cleared.usage["cache_creation_input_tokens"] == cleared.total_input_tokens - through_first_use
    assert cleared.total_input_tokens == first.total_input_tokens - placeholder_savings(
        0
    ) - placeholder_savings(1)


def test_edit_not_triggered_reports_nothing_and_changes_nothing() -> None:
    edit = {"type": "clear_tool_uses_20250919"}  # default trigger: 100,000 input tokens
    body = request(tool_loop(["Bash", "Read", "Grep", "Bash"]), [edit])
    prepared = send(make_engine(), body)
    assert prepared.applied_edits == []
    assert (
        prepared.total_input_tokens
        == make_engine().count_tokens(request(tool_loop(["Bash", "Read", "Grep", "Bash"])), betas=BETAS)[
            "input_tokens"
        ]
    )


def test_clear_at_least_exclude_tools_and_inputs() -> None:
    loop = tool_loop(["Bash", "Read", "Bash", "Grep"])
    low = {"type": "input_tokens", "value": 10}
    too_much = {
        "type": "clear_tool_uses_20250919",
        "trigger": low,
        "clear_at_least": {"type": "input_tokens", "value": 10**6},
    }
    assert send(make_engine(), request(loop, [too_much])).applied_edits == []

    keep_reads = {
        "type": "clear_tool_uses_20250919",
        "trigger": low,
        "keep": {"type": "tool_uses", "value": 0},
        "exclude_tools": ["Read"],
        "clear_tool_inputs": ["Bash"],
    }
    prepared = send(make_engine(), request(loop, [keep_reads]))
    assert prepared.applied_edits is not None and prepared.applied_edits[0]["cleared_tool_uses"] == 3
    uses = [m["content"][0] for m in prepared.visible_body["messages"] if m["role"] == "assistant"]
    assert [u["input"] for u in uses] == [{}, {"arg": "v1"}, {}, {"arg": "v3"}]
    results = [m["content"][0]["content"] for m in prepared.visible_body["messages"][2::2]]
    assert results == [CLEARED_RESULT_TEXT, output(1), CLEARED_RESULT_TEXT, CLEARED_RESULT_TEXT]


def thinking_turns() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for i in range(3):
        messages.append({"role": "user", "content": f"Question {i}"})
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": f"pondering {i} " * 30, "signature": "s"},
                    {"type": "text", "text": f"Answer {i}"},
                ],
            }
        )
    messages.append({"role": "user", "content": "Last question"})
    return messages


def test_clear_thinking_keeps_the_last_n_turns() -> None:
    edit = {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}}
    prepared = send(make_engine(), request(thinking_turns(), [edit]))
    cleared = sum(COUNTER.count_text(f"pondering {i} " * 30) for i in range(2))
    assert prepared.applied_edits == [
        {"type": "clear_thinking_20251015", "cleared_thinking_turns": 2, "cleared_input_tokens": cleared}
    ]
    kinds = [
        [b["type"] for b in m["content"]]
        for m in prepared.visible_body["messages"]
        if m["role"] == "assistant"
    ]
    assert kinds == [["text"], ["text"], ["thinking", "text"]]
    keep_all = send(
        make_engine(), request(thinking_turns(), [{"type": "clear_thinking_20251015", "keep": "all"}])
    )
    assert keep_all.applied_edits == []


def test_clear_thinking_must_come_first() -> None:
    edits = [{"type": "clear_tool_uses_20250919"}, {"type": "clear_thinking_20251015"}]
    with pytest.raises(EmulatorRequestError, match="must be listed before"):
        make_engine().prepare(request(thinking_turns(), edits), api_key="k", betas=BETAS, request_index=0)


def test_context_management_needs_its_beta() -> None:
    with pytest.raises(EmulatorRequestError, match="context_management: Extra inputs are not permitted"):
        make_engine().prepare(request(thinking_turns(), []), api_key="k", betas=set(), request_index=0)


def test_count_tokens_reports_original_input_tokens() -> None:
    engine = make_engine()
    edit = {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": 100},
        "keep": {"type": "tool_uses", "value": 1},
    }
    plain = engine.count_tokens(request(tool_loop(["Bash", "Read", "Grep"])), betas=BETAS)
    counted = engine.count_tokens(request(tool_loop(["Bash", "Read", "Grep"]), [edit]), betas=BETAS)
    assert counted == {
        "input_tokens": plain["input_tokens"] - placeholder_savings(0) - placeholder_savings(1),
        "context_management": {"original_input_tokens": plain["input_tokens"]},
    }
