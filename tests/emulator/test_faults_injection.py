"""Injected failures as the SDK meets them: retried statuses, mid-stream errors, stalls, drops."""

from __future__ import annotations

import anthropic
import httpx2
import pytest

from agent_repl.emulator.faults import FaultKind, FaultPlan

from .conftest import API_KEY, MODERN, user

REQUEST = {"model": MODERN, "max_tokens": 200, "messages": [user("Tell me a story.")]}
LONG = "Once upon a time there was a small server that answered every request it was sent, " * 3


def sdk(emulator, **options) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=emulator.base_url, api_key=API_KEY, **options)


@pytest.mark.parametrize(
    ("kind", "status", "error_type", "message"),
    [
        ("429", 429, "rate_limit_error", None),
        ("529", 529, "overloaded_error", "Overloaded"),
        ("500", 500, "api_error", "Internal server error"),
    ],
)
def test_sdk_retries_status_faults_until_success(emulator, kind, status, error_type, message) -> None:
    emulator.faults.next(kind, count=2)
    with sdk(emulator, max_retries=2) as client:
        reply = client.messages.create(**REQUEST)
    assert reply.content[0].text == "Hello from the emulator."
    attempts = emulator.recordings.messages
    assert [a.status for a in attempts] == [status, status, 200]
    assert [a.attempt for a in attempts] == [0, 1, 2]
    assert [a.fault for a in attempts] == [kind, kind, None]
    failed = attempts[0].response_body
    assert failed["type"] == "error" and failed["error"]["type"] == error_type
    assert failed["request_id"].startswith("req_")
    if message is not None:
        assert failed["error"]["message"] == message


@pytest.mark.parametrize(
    ("kind", "error_class"),
    [
        ("429", anthropic.RateLimitError),
        ("529", anthropic.OverloadedError),
        ("500", anthropic.InternalServerError),
    ],
)
def test_status_faults_raise_the_matching_class_when_retries_run_out(emulator, kind, error_class) -> None:
    emulator.faults.next(kind, count=3)
    with sdk(emulator, max_retries=1) as client, pytest.raises(error_class) as caught:
        client.messages.create(**REQUEST)
    assert len(emulator.recordings.messages) == 2
    assert caught.value.response.headers["retry-after-ms"] == "5"


def test_rate_limit_text_names_the_model(client, emulator) -> None:
    emulator.faults.next("429")
    with pytest.raises(anthropic.RateLimitError) as caught:
        client.messages.create(**REQUEST)
    assert caught.value.body["error"]["message"].startswith(
        "This request would exceed your organization's rate limit of 30,000 input tokens per minute "
        "(org: 00000000-0000-0000-0000-000000000000, model: claude-sonnet-5-5). "
        "For details, refer to: https://docs.claude.com/en/api/rate-limits."
    )


def test_bad_requests_are_not_retried(emulator) -> None:
    with sdk(emulator, max_retries=3) as client, pytest.raises(anthropic.BadRequestError):
        client.messages.create(model=MODERN, max_tokens=10, messages=[user("")])
    assert len(emulator.recordings.messages) == 1


def test_mid_stream_error_raises_api_status_error_with_status_200(emulator, use_policy) -> None:
    use_policy(lambda request: anthropic_text(LONG))
    emulator.faults.next("stream_error")
    with sdk(emulator, max_retries=3) as client, pytest.raises(anthropic.APIStatusError) as caught:
        with client.messages.stream(**REQUEST) as stream:
            stream.until_done()
    err = caught.value
    assert err.status_code == 200 and not isinstance(err, anthropic.OverloadedError)
    assert err.body["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    assert err.body["request_id"] == err.response.headers["request-id"]
    assert len(emulator.recordings.messages) == 1  # never retried
    names = [e["event"] for e in emulator.recordings.messages[0].events]
    assert names[:2] == ["message_start", "ping"] and "content_block_delta" in names and names[-1] == "error"


async def test_async_mid_stream_error(emulator, async_client) -> None:
    emulator.faults.next("stream_error")
    with pytest.raises(anthropic.APIStatusError) as caught:
        async with async_client.messages.stream(**REQUEST) as stream:
            await stream.until_done()
    assert caught.value.status_code == 200


def test_stream_error_on_a_plain_request_is_a_retried_500(emulator) -> None:
    emulator.faults.next("stream_error")
    with sdk(emulator, max_retries=1) as client:
        client.messages.create(**REQUEST)
    assert [a.status for a in emulator.recordings.messages] == [500, 200]


def transport_error(exc: BaseException) -> BaseException:
    """The transport's own error: older SDKs raise it mid-stream, newer ones wrap it (as the cause)."""
    return exc.__cause__ if isinstance(exc, anthropic.APIConnectionError) and exc.__cause__ is not None else exc


def test_stalled_stream_times_out_on_the_client(emulator) -> None:
    emulator.faults.next("stall")
    with sdk(emulator, max_retries=0, timeout=0.5) as client, pytest.raises(Exception) as caught:  # noqa: B017
        with client.messages.stream(**REQUEST) as stream:
            stream.until_done()
    assert isinstance(transport_error(caught.value), httpx2.ReadTimeout), repr(caught.value)
    exchange = emulator.recordings.messages[0]
    assert exchange.fault == "stall" and not exchange.finished
    assert [e["event"] for e in exchange.events][0] == "message_start"


def test_stalled_plain_request_times_out_and_is_retried(emulator) -> None:
    emulator.faults.next("stall")
    with sdk(emulator, max_retries=1, timeout=0.5) as client:
        assert client.messages.create(**REQUEST).content[0].text
    assert [a.fault for a in emulator.recordings.messages] == ["stall", None]


def test_dropped_stream_raises_a_protocol_error(emulator) -> None:
    emulator.faults.next("drop")
    with sdk(emulator, max_retries=2) as client, pytest.raises(Exception) as caught:  # noqa: B017
        with client.messages.stream(**REQUEST) as stream:
            stream.until_done()
    assert isinstance(transport_error(caught.value), httpx2.RemoteProtocolError), repr(caught.value)
    assert len(emulator.recordings.messages) == 1


def test_dropped_plain_request_is_retried_as_a_connection_error(emulator) -> None:
    emulator.faults.next("drop")
    with sdk(emulator, max_retries=0) as client, pytest.raises(anthropic.APIConnectionError):
        client.messages.create(**REQUEST)
    emulator.faults.next("drop")
    with sdk(emulator, max_retries=1) as client:
        assert client.messages.create(**REQUEST).stop_reason == "end_turn"


def test_prompt_too_long_on_demand(client, emulator) -> None:
    emulator.faults.at(0, "prompt_too_long")
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(**REQUEST)
    assert caught.value.body["error"]["message"] == "prompt is too long: 1000001 tokens > 1000000 maximum"


def test_faults_pinned_to_request_indices(client, emulator) -> None:
    emulator.faults.apply_spec("1:529")
    assert client.messages.create(**REQUEST)
    with pytest.raises(anthropic.OverloadedError):
        client.messages.create(**REQUEST)
    assert client.messages.create(**REQUEST)
    assert [a.request_index for a in emulator.recordings.messages] == [0, 1, 2]


def test_faulted_requests_never_advance_the_script(emulator, use_script) -> None:
    steps = [
        {"text": "Looking.", "tools": [{"name": "Bash", "input": {"command": "ls"}}]},
        {"text": "Final answer."},
    ]
    script = use_script(steps)
    for kind in ("stream_error", "drop", "529"):
        emulator.faults.next(kind)
        with sdk(emulator, max_retries=0) as client, pytest.raises((anthropic.APIError, httpx2.HTTPError)):
            with client.messages.stream(**REQUEST) as stream:
                stream.until_done()
        assert script.cursor == 0
    with sdk(emulator, max_retries=0) as client:
        with client.messages.stream(**REQUEST) as stream:
            first = stream.get_final_message()
        # On Sonnet 5.5 the text written before a tool call comes back as (omitted) thinking.
        assert first.content[0].type == "thinking" and first.stop_reason == "tool_use"
        assert script.cursor == 1
        tool = first.content[1]
        follow_up = [
            *REQUEST["messages"],
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tool.id, "content": "a.txt"}],
            },
        ]
        second = client.messages.create(model=MODERN, max_tokens=200, messages=follow_up)
    assert second.content[0].text == "Final answer."


def test_faults_set_over_http(emulator, client) -> None:
    with httpx2.Client() as http:
        posted = http.post(
            f"{emulator.base_url}/_emulator/faults",
            headers=emulator.control_headers,
            json={"spec": "0:429,retry_after_ms=7"},
        ).json()
        assert posted["pinned"] == {"0": "429"} and posted["retry_after_ms"] == 7
        with pytest.raises(anthropic.RateLimitError) as caught:
            client.messages.create(**REQUEST)
        assert caught.value.response.headers["retry-after-ms"] == "7"
        bad = http.post(
            f"{emulator.base_url}/_emulator/faults", headers=emulator.control_headers, json={"spec": "3:explode"}
        )
        assert bad.status_code == 400 and "unknown fault kind 'explode'" in bad.json()["error"]["message"]


def test_spec_language() -> None:
    plan = FaultPlan.parse("2:429, 3:529,5:stream_error,7:stall,9:drop,11:prompt_too_long,stall_seconds=2")
    assert plan.pinned == {
        2: FaultKind.RATE_LIMIT,
        3: FaultKind.OVERLOADED,
        5: FaultKind.STREAM_ERROR,
        7: FaultKind.STALL,
        9: FaultKind.DROP,
        11: FaultKind.PROMPT_TOO_LONG,
    }
    assert plan.stall_seconds == 2.0
    assert [plan.take(i) for i in range(4)] == [None, None, FaultKind.RATE_LIMIT, FaultKind.OVERLOADED]
    for bad in ("x:429", "2:teapot", "rate=2", "colour=blue", "429"):
        with pytest.raises(ValueError):
            FaultPlan.parse(bad)


def test_random_injection_is_seeded() -> None:
    spec = "rate=0.3,seed=7,kinds=429|529|500|stream_error"
    first = [FaultPlan.parse(spec).take(i) for i in range(1)]
    draws = [[plan.take(i) for i in range(200)] for plan in (FaultPlan.parse(spec), FaultPlan.parse(spec))]
    assert draws[0] == draws[1] and first[0] == draws[0][0]
    hits = [d for d in draws[0] if d is not None]
    assert 30 < len(hits) < 90 and set(hits) == {
        FaultKind.RATE_LIMIT,
        FaultKind.OVERLOADED,
        FaultKind.SERVER_ERROR,
        FaultKind.STREAM_ERROR,
    }


def anthropic_text(text: str):
    from agent_repl.emulator.policies import Reply

    return Reply([{"type": "text", "text": text}])
