"""Recording, metering, the control routes, the server's lifecycle and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anthropic
import httpx2
import pytest

from agent_repl.emulator.policies import CallablePolicy, Reply
from agent_repl.emulator.server import AdjustableClock, EmulatorServer

from .conftest import API_KEY, MODERN, say, user

REPO = Path(__file__).resolve().parents[2]
CACHED_SYSTEM = "Rules of the house, repeated so that the prefix is long enough to cache. " * 60


def cached_request(ttl: str) -> dict:
    system = [{"type": "text", "text": CACHED_SYSTEM, "cache_control": {"type": "ephemeral", "ttl": ttl}}]
    return {"model": MODERN, "max_tokens": 50, "system": system, "messages": [user("Hello")]}


def test_requests_are_recorded_exactly_without_credentials(emulator, client) -> None:
    client.messages.create(**cached_request("5m"), extra_headers={"x-api-key": "secret-two"})
    with httpx2.Client() as http:
        recorded = http.get(f"{emulator.base_url}/_emulator/requests", headers=emulator.control_headers).json()
    assert len(recorded) == 1
    entry = recorded[0]
    assert entry["method"] == "POST" and entry["path"] == "/v1/messages" and entry["request_index"] == 0
    assert "authorization" not in entry["headers"] and "x-api-key" not in entry["headers"]
    assert entry["headers"]["anthropic-version"]
    assert entry["body"] == cached_request("5m")
    assert (
        entry["response"]["status"] == 200 and entry["response"]["usage"]["cache_creation_input_tokens"] > 0
    )
    exchange = emulator.recordings.messages[0]
    assert json.loads(exchange.body_bytes) == exchange.body == cached_request("5m")


def test_streamed_exchanges_record_their_events(emulator, client) -> None:
    with client.messages.stream(**cached_request("5m")) as stream:
        stream.until_done()
    exchange = emulator.recordings.messages[0]
    assert exchange.stream and exchange.finished and exchange.status == 200
    assert exchange.events[0]["event"] == "message_start" and exchange.events[-1]["event"] == "message_stop"
    assert exchange.usage["cache_creation_input_tokens"] > 0


def test_usage_totals_over_http(emulator, client) -> None:
    first = client.messages.create(**cached_request("5m"))
    second = client.messages.create(**cached_request("5m"))
    with httpx2.Client() as http:
        totals = http.get(f"{emulator.base_url}/_emulator/usage", headers=emulator.control_headers).json()
    assert totals["requests"] == 2
    assert totals["cache_write_5m_tokens"] == first.usage.cache_creation_input_tokens
    assert totals["cache_read_tokens"] == second.usage.cache_read_input_tokens
    assert totals["output_tokens"] == first.usage.output_tokens + second.usage.output_tokens
    assert totals["cost_usd"] > 0


@pytest.mark.parametrize(("ttl", "survives"), [("5m", False), ("1h", True)])
def test_clock_jump_expires_5m_entries_and_keeps_1h_ones(emulator, client, ttl, survives) -> None:
    written = client.messages.create(**cached_request(ttl)).usage.cache_creation_input_tokens
    with httpx2.Client() as http:
        moved = http.post(f"{emulator.base_url}/_emulator/clock", headers=emulator.control_headers, json={"advance_seconds": 6 * 60})
        assert moved.status_code == 200
        bad = http.post(f"{emulator.base_url}/_emulator/clock", headers=emulator.control_headers, json={"advance_seconds": "soon"})
        assert bad.status_code == 400
    again = client.messages.create(**cached_request(ttl)).usage
    assert again.cache_read_input_tokens == (written if survives else 0)
    assert again.cache_creation_input_tokens == (0 if survives else written)


def test_reset_forgets_recordings_faults_and_cache(emulator, client) -> None:
    client.messages.create(**cached_request("5m"))
    emulator.faults.at(5, "529")
    with httpx2.Client() as http:
        assert http.post(f"{emulator.base_url}/_emulator/reset", headers=emulator.control_headers).json() == {"ok": True}
        assert http.get(f"{emulator.base_url}/_emulator/requests", headers=emulator.control_headers).json() == []
        assert http.get(f"{emulator.base_url}/_emulator/faults", headers=emulator.control_headers).json()["pinned"] == {}
    usage = client.messages.create(**cached_request("5m")).usage
    assert usage.cache_read_input_tokens == 0 and usage.cache_creation_input_tokens > 0
    assert emulator.recordings.messages[0].request_index == 0


def test_cache_entries_are_per_api_key(emulator) -> None:
    for key, read in (("key-a", False), ("key-b", False), ("key-a", True)):
        with anthropic.Anthropic(base_url=emulator.base_url, api_key=key, max_retries=0) as sdk:
            usage = sdk.messages.create(**cached_request("5m")).usage
        assert (usage.cache_read_input_tokens > 0) is read


async def test_async_context_manager_and_free_port() -> None:
    clock = AdjustableClock()
    async with EmulatorServer(policy=CallablePolicy(say("async hello")), clock=clock) as server:
        assert server.port > 0 and server.base_url == f"http://127.0.0.1:{server.port}"
        assert server.clock is clock
        async with anthropic.AsyncAnthropic(base_url=server.base_url, api_key=API_KEY) as sdk:
            reply = await sdk.messages.create(model=MODERN, max_tokens=20, messages=[user("hi")])
        assert reply.content[0].text == "async hello"
    with pytest.raises(httpx2.ConnectError):
        httpx2.get(f"{server.base_url}/v1/models", timeout=2)


def test_a_crashing_policy_becomes_a_500_not_a_dead_server(emulator, use_policy, client) -> None:
    def explode(request) -> Reply:
        raise RuntimeError("policy bug")

    use_policy(explode)
    with pytest.raises(anthropic.InternalServerError) as caught:
        client.messages.create(model=MODERN, max_tokens=20, messages=[user("hi")])
    assert caught.value.body["error"]["type"] == "api_error"
    use_policy(say("alive"))
    assert (
        client.messages.create(model=MODERN, max_tokens=20, messages=[user("hi")]).content[0].text == "alive"
    )


def test_command_line_prints_its_address_first_and_serves(tmp_path) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"steps": [{"text": "Scripted hello."}]}))
    args = [
        sys.executable,
        "-m",
        "agent_repl.emulator",
        "--port",
        "0",
        "--policy",
        f"script:{scenario}",
        "--context-window",
        "5000",
        "--faults",
        "0:529",
    ]
    process = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        first_line = process.stdout.readline().strip()
        assert first_line.startswith("listening on http://127.0.0.1:")
        base_url = first_line.removeprefix("listening on ")
        token = process.stdout.readline().strip().removeprefix("control token ")
        with httpx2.Client() as http:  # the control routes need the token it printed
            assert http.get(f"{base_url}/_emulator/usage").status_code == 401
            assert http.get(f"{base_url}/_emulator/usage", headers={"x-emulator-token": token}).status_code == 200
        with anthropic.Anthropic(base_url=base_url, api_key=API_KEY, max_retries=0) as sdk:
            with pytest.raises(anthropic.OverloadedError):
                sdk.messages.create(model=MODERN, max_tokens=20, messages=[user("hi")])
            reply = sdk.messages.create(model=MODERN, max_tokens=20, messages=[user("hi")])
            assert reply.content[0].text == "Scripted hello."
            assert sdk.models.retrieve(MODERN).max_input_tokens == 5000
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_command_line_rejects_a_bad_fault_spec() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "agent_repl.offline", "--faults", "1:meltdown"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "unknown fault kind 'meltdown'" in result.stderr


def test_the_emulator_command_needs_a_policy_and_knows_no_demo() -> None:
    """The emulator proper is a generic stand-in: the demo model comes with `python -m agent_repl.offline`."""
    missing = subprocess.run(
        [sys.executable, "-m", "agent_repl.emulator"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert missing.returncode == 2 and "--policy" in missing.stderr
    demo = subprocess.run(
        [sys.executable, "-m", "agent_repl.emulator", "--policy", "demo"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert demo.returncode == 2 and "unknown policy 'demo': use `script:FILE`" in demo.stderr
