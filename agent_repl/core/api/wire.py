"""The Messages API over HTTP (httpx2): the one client every request of the agent goes through.

Importing the official `anthropic` SDK takes about a second and a half (it builds the types of
the whole API), longer than a `-p` run may take, for the four routes the agent uses:
`POST /v1/messages` (streamed), `GET /v1/models` and `GET /v1/models/{id}`. So they are sent here
with the SDK's behaviour on the wire (docs/architecture.md, section 6):

- the same JSON body and the same meaningful headers (`anthropic-version`, the credentials as a
  bearer token, `anthropic-beta` comma-joined, the attempt counter `x-stainless-retry-count`);
- retries before a stream starts: what `x-should-retry` says first, else 408, 409, 429, 5xx,
  connection failures and timeouts; the wait is `retry-after-ms`, `retry-after` (seconds or a
  date), else 0.5 s doubling up to 8 s, less up to a quarter of jitter;
- errors as the SDK shapes them: `APIStatusError` with `status_code`, the parsed `body` and
  `request_id`; an `error` event mid-stream is an `APIStatusError` with the stream's status (200);
  `APIConnectionError` and `APITimeoutError` wrap the transport's failure (as `__cause__`).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx2

from agent_repl import __version__

# The `anthropic-version` the SDK this agent was built against sends.
API_VERSION = "2026-10-21"
DEFAULT_BASE_URL = "https://api.anthropic.com"
CONNECT_TIMEOUT = 5.0
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0


class APIError(Exception):
    """A request to the API failed."""

    def __init__(self, message: str, *, body: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.body = body


class APIStatusError(APIError):
    """The API answered with an error: an HTTP status of 400 or more, or an `error` event mid-stream."""

    def __init__(self, message: str, *, status_code: int, body: Any, request_id: str | None = None) -> None:
        super().__init__(message, body=body)
        self.status_code = status_code
        self.request_id = request_id

    @property
    def type(self) -> str | None:
        error = self.body.get("error") if isinstance(self.body, dict) else None
        return error.get("type") if isinstance(error, dict) else None


class APIConnectionError(APIError):
    """The API could not be reached, or the connection broke; the transport's error is `__cause__`."""

    def __init__(self, message: str = "Connection error.") -> None:
        super().__init__(message)


class APITimeoutError(APIConnectionError):
    def __init__(self) -> None:
        super().__init__("Request timed out.")


def _status_error(response: httpx2.Response, body: Any, text: str) -> APIStatusError:
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return APIStatusError(
        f"Error code: {response.status_code} - {message or body or text}",
        status_code=response.status_code,
        body=body if body is not None else text or None,
        request_id=response.headers.get("request-id"),
    )


def transport_failure(exc: httpx2.TransportError) -> APIConnectionError:
    """The transport's error as the SDK reports it: a timeout, or any other connection failure."""
    failure = APITimeoutError() if isinstance(exc, httpx2.TimeoutException) else APIConnectionError(
        f"Connection error: {exc}" if str(exc) else "Connection error."
    )
    failure.__cause__ = exc
    return failure


def _should_retry(response: httpx2.Response) -> bool:
    verdict = response.headers.get("x-should-retry")
    if verdict in ("true", "false"):
        return verdict == "true"
    return response.status_code in (408, 409, 429) or response.status_code >= 500


def retry_delay(attempt: int, headers: httpx2.Headers | None) -> float:
    """Seconds to wait before retry number `attempt + 1`: what the response asks, else backoff."""
    asked: float | None = None
    if headers is not None:
        for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
            try:
                asked = float(headers.get(name, "")) / scale
                break
            except ValueError:
                continue
        if asked is None and headers.get("retry-after"):
            parsed = email.utils.parsedate_tz(headers["retry-after"])
            asked = None if parsed is None else float(email.utils.mktime_tz(parsed) - time.time())
    if asked is not None and asked > 0:
        return min(asked, 4_294_967.0)
    return min(INITIAL_RETRY_DELAY * 2.0 ** min(attempt, 1000), MAX_RETRY_DELAY) * (1 - 0.25 * random.random())


class MessagesWire:
    """HTTP to one endpoint with one set of credentials; the connection pool opens on first use."""

    def __init__(
        self,
        *,
        api_key: str | None,
        auth_token: str | None,
        base_url: str | None,
        max_retries: int,
        timeout: float,
        read_timeout: float | None,
    ) -> None:
        self._credential = api_key or auth_token or os.environ.get("ANTHROPIC_API_KEY")
        self._base_url = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.max_retries = max_retries
        self._timeout = httpx2.Timeout(timeout, read=read_timeout or timeout, connect=CONNECT_TIMEOUT)
        self._http: httpx2.AsyncClient | None = None

    def _client(self) -> httpx2.AsyncClient:
        if self._http is None:
            # A plain-HTTP endpoint (the local emulator) never uses TLS: no certificates to load.
            plain = self._base_url.startswith("http://")
            self._http = httpx2.AsyncClient(
                timeout=self._timeout, headers={"user-agent": f"agent-repl/{__version__}"}, verify=not plain
            )
        return self._http

    def headers(self, attempt: int, betas: Sequence[str], *, with_body: bool) -> dict[str, str]:
        headers = {"accept": "application/json", "anthropic-version": API_VERSION, "x-stainless-retry-count": str(attempt)}
        if with_body:
            headers["content-type"] = "application/json"
        if self._credential:
            headers["authorization"] = f"Bearer {self._credential}"
        if betas:
            headers["anthropic-beta"] = ",".join(betas)
        return headers

    async def _send(
        self, method: str, path: str, *, body: bytes | None = None, params: dict[str, Any] | None = None,
        betas: Sequence[str] = (), stream: bool = False,
    ) -> httpx2.Response:  # fmt: skip
        """The response of the first attempt that is not retried; raises the SDK's error types."""
        attempt = 0
        while True:
            response, failure = await self._attempt(method, path, body, params, betas, stream, attempt)
            if failure is None and response is not None:
                return response
            assert failure is not None
            if attempt >= self.max_retries or (response is not None and not _should_retry(response)):
                raise failure
            await asyncio.sleep(retry_delay(attempt, response.headers if response is not None else None))
            attempt += 1

    async def _attempt(
        self, method: str, path: str, body: bytes | None, params: dict[str, Any] | None, betas: Sequence[str],
        stream: bool, attempt: int,
    ) -> tuple[httpx2.Response | None, APIError | None]:  # fmt: skip
        """One try: (the response, None) when it succeeded; else what failed (with the response, if any)."""
        client = self._client()
        headers = self.headers(attempt, betas, with_body=body is not None)
        request = client.build_request(method, self._base_url + path, content=body, params=params, headers=headers)
        try:
            response = await client.send(request, stream=stream)
        except httpx2.TransportError as exc:
            return None, transport_failure(exc)
        if response.status_code < 400:
            return response, None
        text = (await response.aread()).decode("utf-8", "replace")
        await response.aclose()
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = None
        return response, _status_error(response, parsed, text)

    async def get_json(self, path: str, params: dict[str, Any] | None = None, betas: Sequence[str] = ()) -> Any:
        response = await self._send("GET", path, params=params, betas=betas)
        return response.json()

    async def pages(self, path: str, limit: int, betas: Sequence[str] = ()) -> AsyncIterator[dict[str, Any]]:
        """Every item of a paginated listing (`after_id` from each page's `last_id`)."""
        params: dict[str, Any] = {"limit": limit}
        while True:
            page = await self.get_json(path, params, betas)
            for item in page.get("data") or []:
                yield item
            if not page.get("has_more") or not page.get("last_id"):
                return
            params = {"limit": limit, "after_id": page["last_id"]}

    @asynccontextmanager
    async def message_stream(
        self, body: dict[str, Any], betas: Sequence[str]
    ) -> AsyncIterator[tuple[str | None, AsyncIterator[dict[str, Any]]]]:
        """`POST /v1/messages` with `"stream": true`: (the request id, the stream's events as the
        API sent them, `ping` left out). An `error` event raises `APIStatusError`; a transport
        failure while reading raises `APIConnectionError` (or `APITimeoutError`)."""
        payload = json.dumps({**body, "stream": True}, separators=(",", ":"), ensure_ascii=False).encode()
        response = await self._send("POST", "/v1/messages", body=payload, betas=betas, stream=True)
        try:
            yield response.headers.get("request-id"), _events(response)
        finally:
            await response.aclose()

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()


async def _events(response: httpx2.Response) -> AsyncIterator[dict[str, Any]]:
    """Server-sent events: an event without a name is skipped, as the SDK does."""
    name: str | None = None
    data: list[str] = []
    try:
        async for line in response.aiter_lines():
            if line:
                field, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if field == "event":
                    name = value
                elif field == "data":
                    data.append(value)
                continue
            if name is not None and name != "ping" and data:
                yield _event(response, name, "\n".join(data))
            name, data = None, []
        if name is not None and name != "ping" and data:
            yield _event(response, name, "\n".join(data))
    except httpx2.TransportError as exc:
        raise transport_failure(exc) from exc


def _event(response: httpx2.Response, name: str, data: str) -> dict[str, Any]:
    if name == "error":
        try:
            body: Any = json.loads(data)
        except ValueError:
            body = data
        raise APIStatusError(
            f"{body}", status_code=response.status_code, body=body, request_id=response.headers.get("request-id")
        )
    event = json.loads(data)
    if not isinstance(event, dict):
        raise APIError(f"unexpected stream event {name!r}: {data[:200]}")
    return event
