"""Errors at the HTTP edge: body size (413), malformed bytes, credentials, unknown routes."""

from __future__ import annotations

import anthropic
import httpx2
import pytest

from agent_repl.emulator.server import EmulatorServer

from .conftest import API_KEY, MODERN, user

ASK = user("List the files.")


def test_oversized_body_is_413_in_the_cloudflare_shape_and_not_retried() -> None:
    with EmulatorServer(policy=lambda r: None, max_body_bytes=2_000) as small:
        sdk = anthropic.Anthropic(base_url=small.base_url, api_key=API_KEY, max_retries=2)
        with pytest.raises(anthropic.ContentTooLargeError) as caught:
            sdk.messages.create(model=MODERN, max_tokens=10, messages=[user("x" * 5_000)])
        assert caught.value.status_code == 413
        assert caught.value.body == {
            "error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}
        }
        assert len(small.recordings.messages) == 1
        assert anthropic.RequestTooLargeError is anthropic.ContentTooLargeError


def raw_post(
    emulator: EmulatorServer, content: bytes, headers: dict[str, str] | None = None
) -> httpx2.Response:
    base = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
    auth = {"x-api-key": API_KEY} if headers is None else headers
    with httpx2.Client(timeout=10) as http:
        return http.post(f"{emulator.base_url}/v1/messages", content=content, headers={**base, **auth})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b'{"model": "claude',
            "The request body is not valid JSON: unexpected end of data: line 1 column 18 (char 17)",
        ),
        (
            b'{"model": NaN}',
            "The request body is not valid JSON: unexpected character: line 1 column 11 (char 10)",
        ),
        (b"{model: 1}", "The request body is not valid JSON: unexpected character: line 1 column 2 (char 1)"),
        (
            b"",
            "The request body is not valid JSON: Input is a zero-length, empty document: line 1 column 1 (char 0)",
        ),
        (
            b"{} []",
            "The request body is not valid JSON: unexpected content after document: line 1 column 4 (char 3)",
        ),
        (b"[1, 2]", "Input should be a valid dictionary"),
        (b"\xff\xfe{}", "The request body is not valid JSON: str is not valid UTF-8"),
    ],
)
def test_malformed_bodies_get_400_not_a_crash(emulator, content, message) -> None:
    response = raw_post(emulator, content)
    assert response.status_code == 400
    assert response.json()["error"] == {"type": "invalid_request_error", "message": message}
    assert response.json()["request_id"] == response.headers["request-id"]


def test_missing_credentials_are_401(emulator) -> None:
    response = raw_post(emulator, b"{}", headers={})
    assert response.status_code == 401
    assert response.json()["error"] == {
        "type": "authentication_error",
        "message": "x-api-key header is required",
    }
    sdk = anthropic.Anthropic(
        base_url=emulator.base_url,
        api_key="k",
        max_retries=0,
        default_headers={"Authorization": anthropic.Omit()},
    )
    with pytest.raises(anthropic.AuthenticationError):
        sdk.messages.create(model=MODERN, max_tokens=10, messages=[ASK])


def test_x_api_key_and_bearer_both_authenticate(emulator) -> None:
    body = (
        b'{"model": "claude-sonnet-5-5", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}'
    )
    assert raw_post(emulator, body, {"x-api-key": "one"}).status_code == 200
    assert raw_post(emulator, body, {"authorization": "Bearer two"}).status_code == 200


def test_unknown_route_is_an_api_shaped_404(emulator) -> None:
    with httpx2.Client() as http:
        response = http.get(f"{emulator.base_url}/v1/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"] == {"type": "not_found_error", "message": "Not Found"}
