"""The official SDK, sync and async, create and stream, against the emulator over loopback HTTP."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest

from agent_repl.emulator.policies import Reply

from .conftest import LEGACY, MODERN, user

THINKING = "First I weigh the options. Then I pick the simplest one that works."
TEXT = "Here is a longer answer, so that the stream has to carry it in several text deltas."
TOOL_INPUT = {"command": "ls -la /tmp", "description": "List files", "nested": {"a": [1, 2, 3], "b": None}}


def mixed_reply(request: Any) -> Reply:
    return Reply(
        [
            {"type": "thinking", "thinking": THINKING, "signature": ""},
            {"type": "text", "text": TEXT},
            {"type": "tool_use", "id": "toolu_01AbCdEfGhIjKlMnOpQrStUv", "name": "Bash", "input": TOOL_INPUT},
        ],
        "tool_use",
    )


# Haiku 5.5 keeps text written before a tool call as text; the thinking display is asked for.
MIXED_MODEL = "claude-haiku-5-5"
REQUEST: dict[str, Any] = {
    "model": MIXED_MODEL,
    "max_tokens": 2000,
    "messages": [user("List the files, please.")],
    "thinking": {"type": "adaptive", "display": "summarized"},
    "tools": [{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}}],
}


def dump(blocks: list[Any]) -> list[dict[str, Any]]:
    return [block.model_dump(exclude={"parsed_output"}) for block in blocks]


def assert_mixed(message: anthropic.types.Message) -> None:
    thinking, text, tool = message.content
    assert thinking.type == "thinking" and thinking.thinking == THINKING
    assert thinking.signature.startswith("EmuSig2")
    assert text.type == "text" and text.text == TEXT
    assert tool.type == "tool_use" and tool.input == TOOL_INPUT and tool.name == "Bash"
    assert tool.id == "toolu_01AbCdEfGhIjKlMnOpQrStUv"
    assert message.stop_reason == "tool_use" and message.stop_sequence is None
    assert message.role == "assistant" and message.model == MIXED_MODEL and message.id.startswith("msg_01")
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0
    assert message.usage.cache_read_input_tokens == 0 and message.usage.cache_creation_input_tokens == 0
    assert message.usage.cache_creation is not None
    if not isinstance(message, anthropic.types.ParsedMessage):  # streamed messages carry no request id
        assert message._request_id and message._request_id.startswith("req_")


def test_sync_create_assembles_thinking_text_and_tool_use(client, use_policy) -> None:
    use_policy(mixed_reply)
    assert_mixed(client.messages.create(**REQUEST))


def test_sync_stream_assembles_the_same_message(client, use_policy, emulator) -> None:
    use_policy(mixed_reply)
    with client.messages.stream(**REQUEST) as stream:
        texts = list(stream.text_stream)
        message = stream.get_final_message()
    assert_mixed(message)
    assert "".join(texts) == TEXT and len(texts) >= 2
    plain = client.messages.create(**REQUEST)
    assert dump(plain.content) == dump(message.content)
    assert plain.usage.output_tokens == message.usage.output_tokens


async def test_async_create_and_stream(async_client, use_policy) -> None:
    use_policy(mixed_reply)
    assert_mixed(await async_client.messages.create(**REQUEST))
    async with async_client.messages.stream(**REQUEST) as stream:
        message = await stream.get_final_message()
    assert_mixed(message)


async def test_async_raw_stream_events(async_client, use_policy) -> None:
    use_policy(mixed_reply)
    kinds = [event.type async for event in await async_client.messages.create(**REQUEST, stream=True)]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]


def test_wire_events_follow_the_reference_order(client, use_policy, emulator) -> None:
    use_policy(mixed_reply)
    with client.messages.stream(**REQUEST) as stream:
        stream.until_done()
    events = emulator.recordings.messages[-1].events
    names = [e["event"] for e in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert all(e["data"]["type"] == e["event"] for e in events)
    start = events[0]["data"]["message"]
    assert start["content"] == [] and start["stop_reason"] is None and start["stop_sequence"] is None
    assert {"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation"} <= set(
        start["usage"]
    )
    delta = events[-2]["data"]
    assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None, "stop_details": None}
    assert delta["usage"]["output_tokens"] > start["usage"]["output_tokens"]
    by_block: dict[int, list[dict[str, Any]]] = {}
    for e in events:
        if e["event"] == "content_block_delta":
            by_block.setdefault(e["data"]["index"], []).append(e["data"]["delta"])
    thinking, text, tool = by_block[0], by_block[1], by_block[2]
    assert [d["type"] for d in thinking][-1] == "signature_delta"
    assert names[names.index("content_block_stop") - 1] == "content_block_delta"  # the signature, then stop
    assert len(text) >= 2 and "".join(d["text"] for d in text) == TEXT
    assert tool[0] == {"type": "input_json_delta", "partial_json": ""} and len(tool) >= 3
    assert json.loads("".join(d["partial_json"] for d in tool)) == TOOL_INPUT
    tool_start = next(
        e["data"] for e in events if e["event"] == "content_block_start" and e["data"]["index"] == 2
    )
    assert tool_start["content_block"]["input"] == {}


def test_raw_sse_bytes_are_named_events(emulator, use_policy) -> None:
    import httpx2

    use_policy(mixed_reply)
    body = {**REQUEST, "stream": True}
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    with httpx2.Client() as http:
        response = http.post(f"{emulator.base_url}/v1/messages?beta=true", json=body, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["request-id"].startswith("req_")
    frames = response.text.split("\n\n")
    assert frames[-1] == ""
    for frame in frames[:-1]:
        event_line, data_line = frame.split("\n")
        assert event_line.startswith("event: ") and data_line.startswith("data: ")
        assert json.loads(data_line[6:])["type"] == event_line[7:]


def test_omitted_thinking_streams_only_a_signature(client, use_policy, emulator) -> None:
    use_policy(mixed_reply)
    request = {**REQUEST, "thinking": {"type": "adaptive", "display": "omitted"}}
    with client.messages.stream(**request) as stream:
        message = stream.get_final_message()
    assert message.content[0].thinking == "" and message.content[0].signature
    deltas = [
        e["data"]["delta"]["type"]
        for e in emulator.recordings.messages[-1].events
        if e["event"] == "content_block_delta" and e["data"]["index"] == 0
    ]
    assert deltas == ["signature_delta"]


def test_two_identical_requests_second_reads_the_prefix_from_cache(client) -> None:
    system = [
        {
            "type": "text",
            "text": "You are a careful assistant. " * 200,
            "cache_control": {"type": "ephemeral"},
        }
    ]
    request = {"model": MODERN, "max_tokens": 100, "system": system, "messages": [user("Hi there")]}
    first = client.messages.create(**request)
    with client.messages.stream(**request) as stream:
        second = stream.get_final_message()
    assert first.usage.cache_creation_input_tokens > 512 and first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens == 0
    assert second.usage.input_tokens == first.usage.input_tokens
    assert first.usage.cache_creation.ephemeral_5m_input_tokens == first.usage.cache_creation_input_tokens


def test_count_tokens_matches_message_usage(client) -> None:
    request = {"model": MODERN, "messages": [user("How many tokens is this sentence, roughly?")]}
    counted = client.messages.count_tokens(**request)
    created = client.messages.create(max_tokens=50, **request)
    assert counted.input_tokens == created.usage.input_tokens > 0


def test_prefill_is_accepted_on_a_legacy_model(client) -> None:
    message = client.messages.create(
        model=LEGACY, max_tokens=50, messages=[user("Say hi"), {"role": "assistant", "content": "Hi"}]
    )
    assert message.content[0].text


def test_models_list_and_retrieve(client) -> None:
    models = list(client.models.list(limit=2))
    ids = [m.id for m in models]
    assert MODERN in ids and LEGACY in ids and len(ids) == len(set(ids))
    info = client.models.retrieve(LEGACY)
    assert info.max_input_tokens == 200_000 and info.max_tokens == 64_000
    assert info.capabilities is not None
    cm = info.capabilities.context_management.model_dump()
    # Our cache-editing beta is not part of the public API: advertised only by a server that has it on.
    assert "cache_edits_agent_repl" not in cm
    with pytest.raises(anthropic.NotFoundError) as caught:
        client.models.retrieve("claude-nonexistent-1")
    assert caught.value.body["error"]["message"] == "model: claude-nonexistent-1"


def test_models_page_shape(client) -> None:
    page = client.models.list(limit=1)
    assert page.has_more is True and page.first_id == page.last_id == page.data[0].id
