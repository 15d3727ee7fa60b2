"""The agent's own HTTP client (agent_repl.core.api.wire) against the official SDK, over HTTP to the
emulator: the same request on the wire, the same reply once accumulated, the SDK's retries and
error types."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import pytest

from agent_repl.core.api.betas import ON_DEMAND_COMPACTION_BETA, request_betas
from agent_repl.core.api.client import (
    ModelClient,
    ModelResponse,
    UnknownModel,
    content_from_api,
    describe_api_error,
    is_retryable_stream_failure,
    usage_from_api,
)
from agent_repl.core.api.wire import APIStatusError
from agent_repl.core.model.events import StreamEvent, TextDelta, ThinkingDelta
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

KEY = "sk-ant-test-wire-key"
# What both clients must agree on; the rest (user-agent, x-stainless-lang, -os, ...) says which
# client library sent the request.
MEANINGFUL_HEADERS = ("accept", "content-type", "anthropic-version", "anthropic-beta", "x-stainless-retry-count")
STEPS = [
    {"thinking": "look first", "text": "Reading it.", "tools": [{"name": "Read", "input": {"file_path": "/a b/ü.txt"}}]},
    {"text": "Done, with \"quotes\" and ünïcode."},
]
BODIES = [
    {"model": "claude-sonnet-5-5", "max_tokens": 300, "messages": [{"role": "user", "content": "hi"}]},
    {
        "model": "claude-sonnet-5-5",
        "max_tokens": 300,
        "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "read it"}]}],
        "tools": [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}],
        "thinking": {"type": "adaptive", "display": "updates"},
        "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
    },
]


@pytest.fixture
def server():
    with EmulatorServer(policy=ScriptPolicy({"steps": STEPS * 4})) as running:
        yield running


async def _ours(url: str, body: dict[str, Any], **options: Any) -> list[Any]:
    client = ModelClient(api_key=KEY, base_url=url, max_retries=options.pop("max_retries", 2), **options)
    try:
        return [event async for event in client.stream(body, raw_events=True)]
    finally:
        await client.close()


async def _sdks(url: str, body: dict[str, Any]) -> Any:
    """The request as the agent sent it through the SDK before it had its own client."""
    async with anthropic.AsyncAnthropic(api_key=KEY, base_url=url, max_retries=2) as sdk:
        betas = request_betas(body)
        manager = sdk.beta.messages.stream(**body, betas=betas) if betas else sdk.messages.stream(**body)
        async with manager as stream:
            async for _ in stream:
                pass
            return await stream.get_final_message()


@pytest.mark.parametrize("body", BODIES, ids=["plain", "betas"])
def test_the_request_on_the_wire_is_the_sdks(server, body):
    ours = asyncio.run(_ours(server.base_url, body))
    sdk_final = asyncio.run(_sdks(server.base_url, body))
    mine, theirs = server.recordings.messages
    assert (mine.method, mine.path, mine.query) == (theirs.method, theirs.path, theirs.query)
    assert mine.body == theirs.body and mine.body["stream"] is True
    assert {h: mine.headers.get(h) for h in MEANINGFUL_HEADERS} == {h: theirs.headers.get(h) for h in MEANINGFUL_HEADERS}
    assert mine.headers.get("anthropic-beta") == (",".join(request_betas(body)) or None)
    assert mine.status == theirs.status == 200

    final = ours[-1]
    assert isinstance(final, ModelResponse)
    sdk_blocks = [block.model_dump(mode="json", exclude_none=True) for block in sdk_final.content]
    assert final.content == content_from_api(sdk_blocks)
    assert final.usage == usage_from_api(sdk_final.usage.model_dump())
    assert final.stop_reason == sdk_final.stop_reason and final.model == sdk_final.model
    assert final.request_id and final.message_id.startswith("msg_")
    streamed = "".join(e.text for e in ours if isinstance(e, TextDelta))
    assert streamed == "".join(b.text for b in sdk_final.content if b.type == "text")
    raw = [e.event["type"] for e in ours if isinstance(e, StreamEvent)]
    assert raw[0] == "message_start" and raw[-1] == "message_stop" and "ping" not in raw


def test_a_tool_calls_input_and_the_thinking_add_up_from_their_deltas(server):
    final = asyncio.run(_ours(server.base_url, BODIES[1]))
    thinking = "".join(e.text for e in final if isinstance(e, ThinkingDelta))
    response = final[-1]
    kinds = [block.type for block in response.content]
    assert "tool_use" in kinds
    tool = next(block for block in response.content if block.type == "tool_use")
    assert tool.input == {"file_path": "/a b/ü.txt"}
    assert response.stop_reason == "tool_use"
    blocks = [block for block in response.content if block.type == "thinking"]
    assert thinking == "".join(block.thinking for block in blocks)


def test_a_retryable_status_is_retried_with_the_attempt_counted(server):
    server.faults.queued.extend([_fault("529"), _fault("429")])
    events = asyncio.run(_ours(server.base_url, BODIES[0]))
    assert isinstance(events[-1], ModelResponse)
    attempts = [(e.status, e.attempt) for e in server.recordings.messages]
    assert attempts == [(529, 0), (429, 1), (200, 2)]


def test_out_of_retries_the_status_error_carries_what_the_sdks_did(server):
    server.faults.queued.extend([_fault("529")] * 2)
    with pytest.raises(APIStatusError) as caught:
        asyncio.run(_ours(server.base_url, BODIES[0], max_retries=1))
    assert caught.value.status_code == 529 and caught.value.type == "overloaded_error"
    assert caught.value.request_id
    assert describe_api_error(caught.value).startswith("API error 529 (overloaded_error)")


def test_a_bad_request_is_not_retried(server):
    body = {**BODIES[0], "max_tokens": -1}
    with pytest.raises(APIStatusError) as caught:
        asyncio.run(_ours(server.base_url, body))
    assert caught.value.status_code == 400
    assert len(server.recordings.messages) == 1


def test_an_error_event_mid_stream_is_a_status_error_the_loop_may_retry(server):
    server.faults.queued.append(_fault("stream_error"))
    with pytest.raises(APIStatusError) as caught:
        asyncio.run(_ours(server.base_url, BODIES[0]))
    assert caught.value.status_code == 200
    assert is_retryable_stream_failure(caught.value)
    assert len(server.recordings.messages) == 1  # never retried by the client itself


def test_an_unreachable_endpoint_is_a_connection_error():
    with pytest.raises(Exception) as caught:
        asyncio.run(_ours("http://127.0.0.1:9", BODIES[0], max_retries=0))
    assert describe_api_error(caught.value).startswith("Could not reach the API")
    assert is_retryable_stream_failure(caught.value)


def test_the_models_routes_match_the_sdks(server):
    async def ours() -> tuple[Any, Any, Any]:
        client = ModelClient(api_key=KEY, base_url=server.base_url, max_retries=0)
        try:
            data = await client.model_data("claude-sonnet-5-5")
            listing = await client.model_listing()
            with pytest.raises(UnknownModel):
                await client.model_data("claude-nonesuch-1")
            return data, listing, await client.list_models()
        finally:
            await client.close()

    data, listing, plain = asyncio.run(ours())
    seen = len(server.recordings.exchanges)
    with anthropic.Anthropic(api_key=KEY, base_url=server.base_url, max_retries=0) as sdk:
        sdk_data = sdk.beta.models.retrieve("claude-sonnet-5-5", betas=[ON_DEMAND_COMPACTION_BETA])
        sdk_listing = list(sdk.beta.models.list(limit=1000, betas=[ON_DEMAND_COMPACTION_BETA]))
    assert data["id"] == sdk_data.id and data["max_input_tokens"] == sdk_data.max_input_tokens
    assert set(listing) == {m.id for m in sdk_listing} == {m["id"] for m in plain}
    mine, theirs = server.recordings.exchanges[:2], server.recordings.exchanges[seen : seen + 2]
    for a, b in zip(mine, theirs, strict=True):
        assert (a.method, a.path, a.query) == (b.method, b.path, b.query)
        assert {h: a.headers.get(h) for h in MEANINGFUL_HEADERS} == {h: b.headers.get(h) for h in MEANINGFUL_HEADERS}


def _fault(kind: str) -> Any:
    from agent_repl.emulator.faults import parse_kind

    return parse_kind(kind)
