"""The emulator as another local user meets it: loopback only, control routes behind a token, a bounded recorder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anthropic
import httpx2
import pytest

from agent_repl.emulator.policies import CallablePolicy
from agent_repl.emulator.recording import Recorder, RecordLimit
from agent_repl.emulator.server import EmulatorServer

from .conftest import API_KEY, MODERN, say, user

REPO = Path(__file__).resolve().parents[2]
CONTROL_ROUTES = [
    ("GET", "/_emulator/requests", None),
    ("GET", "/_emulator/usage", None),
    ("POST", "/_emulator/reset", None),
    ("POST", "/_emulator/clock", {"advance_seconds": 1}),
    ("GET", "/_emulator/faults", None),
    ("POST", "/_emulator/faults", {"spec": "0:529"}),
]


@pytest.mark.parametrize(("method", "path", "payload"), CONTROL_ROUTES)
def test_every_control_route_needs_the_runs_token(emulator, client, method, path, payload) -> None:
    client.messages.create(model=MODERN, max_tokens=20, messages=[user("the private conversation")])
    with httpx2.Client() as http:
        for headers in ({}, {"x-emulator-token": "guessed"}, {"x-api-key": API_KEY}):
            refused = http.request(method, f"{emulator.base_url}{path}", headers=headers, json=payload)
            assert refused.status_code == 401, (path, headers)
            assert refused.json()["error"]["type"] == "authentication_error"
            assert "the private conversation" not in refused.text
        assert emulator.faults.to_dict()["pinned"] == {}  # nothing was injected by the refused calls
        assert len(emulator.recordings) == 1  # nor reset
        allowed = http.request(
            method, f"{emulator.base_url}{path}", headers=emulator.control_headers, json=payload
        )
        assert allowed.status_code == 200


def test_each_server_has_its_own_token_and_it_is_never_recorded(emulator, client) -> None:
    other = EmulatorServer(policy=CallablePolicy(say("x")))
    assert other.control_token != emulator.control_token and len(emulator.control_token) >= 24
    client.messages.create(
        model=MODERN, max_tokens=20, messages=[user("hi")], extra_headers=emulator.control_headers
    )
    assert "x-emulator-token" not in emulator.recordings.messages[0].headers


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com"])
def test_the_server_refuses_to_listen_beyond_loopback(host) -> None:
    with pytest.raises(ValueError, match="loopback only"):
        EmulatorServer(policy=CallablePolicy(say("x")), host=host)


def test_the_recorder_keeps_the_latest_exchanges_by_count() -> None:
    recorder = Recorder(RecordLimit(exchanges=3, bytes=10_000))
    for i in range(5):
        recorder.start("POST", "/v1/messages", "", {}, b"%d" % i, 0.0)
    assert [e.seq for e in recorder.exchanges] == [2, 3, 4]
    assert recorder.dropped == 2
    assert [e.body for e in recorder.since(4)] == [4]


def test_the_recorder_keeps_the_latest_exchanges_by_bytes() -> None:
    recorder = Recorder(RecordLimit(exchanges=100, bytes=250))
    for i in range(4):
        recorder.start("POST", "/v1/messages", "", {}, bytes([48 + i]) * 100, 0.0)
    assert [e.seq for e in recorder.exchanges] == [2, 3]
    big = recorder.start("POST", "/v1/messages", "", {}, b"x" * 1_000, 0.0)
    assert recorder.exchanges == [big]  # one over the limit alone is still kept, the newest
    assert recorder.dropped == 4


def test_streamed_responses_count_against_the_byte_limit() -> None:
    with EmulatorServer(
        policy=CallablePolicy(say("word " * 2_000)), record_limit=RecordLimit(exchanges=100, bytes=15_000)
    ) as server:
        with anthropic.Anthropic(base_url=server.base_url, api_key=API_KEY, max_retries=0) as sdk:
            for _ in range(3):
                with sdk.messages.stream(model=MODERN, max_tokens=4_000, messages=[user("hi")]) as stream:
                    stream.until_done()
        first = server.recordings.exchanges[0]
        assert first.response_bytes > 10_000
        server.recordings.start("GET", "/v1/models", "", {}, b"", 0.0)
        assert server.recordings.dropped >= 2


def test_a_test_reads_what_it_needs_over_http_with_since_and_dropped() -> None:
    with EmulatorServer(
        policy=CallablePolicy(say("ok")), record_limit=RecordLimit(exchanges=2, bytes=1 << 20)
    ) as server:
        with anthropic.Anthropic(base_url=server.base_url, api_key=API_KEY, max_retries=0) as sdk:
            for text in ("one", "two", "three"):
                sdk.messages.create(model=MODERN, max_tokens=20, messages=[user(text)])
        with httpx2.Client() as http:
            url = f"{server.base_url}/_emulator/requests"
            kept = http.get(url, headers=server.control_headers)
            assert kept.headers["x-emulator-dropped"] == "1"
            assert [e["seq"] for e in kept.json()] == [1, 2]
            newest = http.get(url, params={"since": 2}, headers=server.control_headers).json()
            assert [e["body"]["messages"][0]["content"] for e in newest] == ["three"]
            assert http.get(url, params={"since": "x"}, headers=server.control_headers).status_code == 400


def test_command_line_refuses_a_public_host() -> None:
    public = subprocess.run(
        [sys.executable, "-m", "agent_repl.offline", "--host", "0.0.0.0"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert public.returncode == 2 and "loopback only" in public.stderr
