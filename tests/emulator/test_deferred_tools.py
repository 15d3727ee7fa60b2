"""The emulator's tool search semantics: deferred tools stay out of the prompt, a tool_reference
loads one where it stands, and requests the API refuses are refused."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from .conftest import MODERN, say, user

LOADED = {"name": "Read", "description": "Read a file.", "input_schema": {"type": "object"}}


def deferred_tool(index: int) -> dict[str, Any]:
    properties = {f"field_{k}": {"type": "string", "description": f"Field {k} of record {index}."} for k in range(8)}
    return {
        "name": f"mcp__ledger__record_{index:02d}",
        "description": f"Look up record {index} of the ledger, with every change since it was created.",
        "input_schema": {"type": "object", "properties": properties},
        "defer_loading": True,
    }


def count(client: anthropic.Anthropic, tools: list[dict[str, Any]], messages: list[dict[str, Any]]) -> int:
    return client.messages.count_tokens(model=MODERN, tools=tools, messages=messages).input_tokens


def search_turn(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        user("find the ledger tool"),
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "ToolSearch", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": content}]},
    ]


def test_deferred_tools_cost_nothing_until_a_reference_loads_one(client):
    many = [deferred_tool(i) for i in range(30)]
    question = [user("hello")]
    base = count(client, [LOADED], question)
    assert count(client, [LOADED, *many], question) == base
    undeferred = [{k: v for k, v in t.items() if k != "defer_loading"} for t in many]
    assert count(client, [LOADED, *undeferred], question) > base + 30 * 50

    referenced = search_turn([{"type": "tool_reference", "tool_name": "mcp__ledger__record_03"}])
    as_text = search_turn([{"type": "text", "text": "mcp__ledger__record_03"}])
    one_tool = count(client, [LOADED, undeferred[3]], question) - base
    loaded = count(client, [LOADED, *many], referenced) - count(client, [LOADED, *many], as_text)
    # The two differ only by the few tokens of the reference's own framing (about 10 cl100k tokens).
    assert abs(loaded - one_tool) <= 15


def test_a_reference_to_an_unknown_tool_or_an_all_deferred_list_is_refused(client):
    with pytest.raises(anthropic.BadRequestError, match="tool_reference names 'mcp__x__y', which is not a tool"):
        count(client, [LOADED], search_turn([{"type": "tool_reference", "tool_name": "mcp__x__y"}]))
    with pytest.raises(anthropic.BadRequestError, match="at least one tool must not set defer_loading"):
        count(client, [deferred_tool(1)], [user("hi")])
    with pytest.raises(anthropic.BadRequestError, match=r"content\.0\.tool_reference\.tool_name: Field required"):
        count(client, [LOADED], search_turn([{"type": "tool_reference"}]))


def test_adding_a_deferred_tool_keeps_the_cached_prefix(client, use_policy):
    use_policy(say("ok"))
    system = [{"type": "text", "text": "You are terse. " * 400, "cache_control": {"type": "ephemeral"}}]
    tools = [{**LOADED, "cache_control": {"type": "ephemeral"}}, deferred_tool(1)]
    first = client.messages.create(model=MODERN, max_tokens=50, system=system, tools=tools, messages=[user("hi")])
    second = client.messages.create(
        model=MODERN, max_tokens=50, system=system, tools=[*tools, deferred_tool(2)], messages=[user("hi")]
    )
    assert first.usage.cache_creation_input_tokens > 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens

