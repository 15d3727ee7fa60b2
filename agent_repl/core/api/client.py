"""Streaming one request to the Messages API, and asking the endpoint about its models.

Requests go through `agent_repl.core.api.wire` (httpx2, with the SDK's wire format, retries and
error types): it retries failures that happen before a stream starts (429, 5xx, connection
errors), honouring `retry-after`. A failure after the stream started is never retried there;
`is_retryable_stream_failure` tells the loop which of those it may retry itself. The HTTP client
is imported on first use, so starting the app does not wait for it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter

from agent_repl.core.api.betas import ON_DEMAND_COMPACTION_BETA, request_betas
from agent_repl.core.model.events import StreamEvent, TextDelta, ThinkingDelta
from agent_repl.core.model.messages import ContentBlock, Usage

if TYPE_CHECKING:
    from agent_repl.core.api.wire import MessagesWire

_BLOCKS = TypeAdapter(list[ContentBlock])
RETRYABLE_STREAM_ERROR_TYPES = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
# The stream's own event types (others, such as `ping`, are not passed on).
RAW_STREAM_EVENTS = frozenset(
    {"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
)


@dataclass
class ModelResponse:
    message_id: str
    model: str
    content: list[ContentBlock]
    stop_reason: str | None
    usage: Usage
    request_id: str | None
    context_management: dict[str, Any] | None = None
    # For `refusal`: {"type": "refusal", "category": ..., "explanation": ...}.
    stop_details: dict[str, Any] | None = None
    # Thinking blocks the API dropped or let through (`input_transformations`, beta).
    input_transformations: list[dict[str, Any]] | None = None


def usage_from_api(usage: Any) -> Usage:
    data = dict(usage or {})
    creation = data.get("cache_creation") or {}
    return Usage(
        input_tokens=data.get("input_tokens") or 0,
        output_tokens=data.get("output_tokens") or 0,
        cache_creation_input_tokens=data.get("cache_creation_input_tokens") or 0,
        cache_read_input_tokens=data.get("cache_read_input_tokens") or 0,
        ephemeral_5m_input_tokens=creation.get("ephemeral_5m_input_tokens") or 0,
        ephemeral_1h_input_tokens=creation.get("ephemeral_1h_input_tokens") or 0,
        cache_deleted_input_tokens=data.get("cache_deleted_input_tokens") or 0,
        thinking_tokens=(data.get("output_tokens_details") or {}).get("thinking_tokens") or 0,
        web_search_requests=(data.get("server_tool_use") or {}).get("web_search_requests") or 0,
        web_fetch_requests=(data.get("server_tool_use") or {}).get("web_fetch_requests") or 0,
        service_tier=data.get("service_tier"),
        inference_geo=data.get("inference_geo"),
        speed=data.get("speed"),
    )


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def content_from_api(content: list[dict[str, Any]]) -> list[ContentBlock]:
    """The blocks of a reply the agent keeps, with the fields it sends back."""
    allowed = {
        "text": ("type", "text"),
        "thinking": ("type", "thinking", "signature"),
        "redacted_thinking": ("type", "data"),
        "tool_use": ("type", "id", "name", "input"),
        "compaction": ("type", "content", "signature", "encrypted_content"),
    }
    # The server tools' blocks go back to the API as they came: every field is kept.
    whole = {"server_tool_use", "web_search_tool_result", "web_fetch_tool_result"}
    blocks = []
    for data in content:
        if data.get("type") in whole:
            blocks.append(_without_none(data))
            continue
        if data.get("type") == "text" and data.get("citations"):
            blocks.append({"type": "text", "text": data["text"], "citations": data["citations"]})
            continue
        keys = allowed.get(data.get("type", ""))
        if keys is None:
            continue  # server-side block kinds this agent does not use
        blocks.append({k: data[k] for k in keys if data.get(k) is not None or k == "type"})
    return _BLOCKS.validate_python(blocks)


class UnknownModel(Exception):
    """The endpoint answered 404 for this model id."""


def is_model_not_found(exc: BaseException, model: str) -> bool:
    """A 404 about the model itself, not an endpoint that has no models API at all."""
    body = getattr(exc, "body", None)
    error = body.get("error") if isinstance(body, dict) else None
    message = str(error.get("message") or "") if isinstance(error, dict) else ""
    return message.startswith("model:") or model in message


def _is_transport_error(exc: BaseException) -> bool:
    return type(exc).__module__.startswith(("httpx", "httpcore", "h11")) or isinstance(exc, ConnectionError)


def is_retryable_stream_failure(exc: BaseException) -> bool:
    """A failure mid-stream that a fresh request may fix: overload, a server error, a dropped connection."""
    from agent_repl.core.api.wire import APIConnectionError, APIStatusError

    if isinstance(exc, APIStatusError):
        if exc.status_code == 200:
            body = exc.body if isinstance(exc.body, dict) else {}
            error = body.get("error") if isinstance(body.get("error"), dict) else body
            return (error or {}).get("type") in RETRYABLE_STREAM_ERROR_TYPES
        return False
    return isinstance(exc, APIConnectionError) or _is_transport_error(exc)


# Noted on an error raised while a reply was streaming (after the response had begun).
MID_REPLY = "agent-repl: raised mid-reply"


def describe_api_error(exc: BaseException) -> str:
    from agent_repl.core.api.wire import APIConnectionError, APIStatusError, APITimeoutError

    if isinstance(exc, APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        error = body.get("error") if isinstance(body.get("error"), dict) else {}
        message = (error or {}).get("message") or str(exc)
        return f"API error {exc.status_code} ({(error or {}).get('type', 'error')}): {message}"
    mid_reply = MID_REPLY in getattr(exc, "__notes__", ())
    if isinstance(exc, APIConnectionError) and mid_reply and exc.__cause__ is not None:
        exc = exc.__cause__  # the transport's error says what broke
    elif isinstance(exc, APITimeoutError):
        return "The API did not answer in time (the request timed out)."
    elif isinstance(exc, APIConnectionError):
        return f"Could not reach the API: {exc}"
    name = type(exc).__name__
    if mid_reply or _is_transport_error(exc):
        # The transport's own errors carry terse or empty messages; say what happened to the reply.
        if "Timeout" in name:
            return f"The API stopped sending mid-reply: no data within the stream idle timeout ({name})."
        return f"The connection to the API broke mid-reply ({name}: {exc})."
    return f"{name}: {exc}"


class ModelClient:
    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None,
        max_retries: int,
        timeout: float = 600.0,
        read_timeout: float | None = None,
        auth_token: str | None = None,
    ):
        """`read_timeout`: the longest wait for the next bytes of a response (default: `timeout`),
        so a stalled stream fails fast. The credentials go as a bearer token, the key first."""
        self._api_key = api_key
        self._auth_token = auth_token
        self._base_url = base_url
        self._max_retries = max_retries
        self._timeout = timeout
        self._read_timeout = read_timeout
        self._wire: Any = None
        self._model_data: dict[str, dict[str, Any] | None] = {}

    def wire(self) -> MessagesWire:
        if self._wire is None:
            from agent_repl.core.api.wire import MessagesWire

            self._wire = MessagesWire(
                api_key=self._api_key,
                auth_token=None if self._api_key else self._auth_token,
                base_url=self._base_url,
                max_retries=self._max_retries,
                timeout=self._timeout,
                read_timeout=self._read_timeout,
            )
        return self._wire

    async def stream(
        self, body: dict[str, Any], *, raw_events: bool = False
    ) -> AsyncIterator[TextDelta | ThinkingDelta | StreamEvent | ModelResponse]:
        """Yield text and thinking deltas as they arrive (and with `raw_events` every stream event
        as the API sent it, the first with the time to it), then the complete response. The
        `anthropic-beta` header is read from the body (`request_betas`): whatever beta feature the
        body carries goes with its header."""
        from agent_repl.core.api.accumulate import MessageAccumulator

        betas = request_betas(body)
        sent = time.monotonic()
        message = MessageAccumulator(betas)
        async with self.wire().message_stream(body, betas) as (request_id, events):
            try:
                async for event in events:
                    kind = event.get("type")
                    if raw_events and kind in RAW_STREAM_EVENTS:
                        ttft = round((time.monotonic() - sent) * 1000) if kind == "message_start" else None
                        yield StreamEvent(event=event, ttft_ms=ttft)
                    grew = message.add(event)
                    if grew is not None:
                        yield TextDelta(text=grew[1]) if grew[0] == "text" else ThinkingDelta(text=grew[1])
            except Exception as exc:
                exc.add_note(MID_REPLY)  # the reply had begun: the error types alone do not say so
                raise
        final = message.final()
        yield ModelResponse(
            message_id=final.get("id", ""),
            model=final.get("model", ""),
            content=content_from_api(final["content"]),
            stop_reason=final.get("stop_reason"),
            usage=usage_from_api(final.get("usage")),
            request_id=request_id,
            context_management=final.get("context_management"),
            stop_details=final.get("stop_details"),
            input_transformations=final.get("input_transformations"),
        )

    async def model_data(self, model: str) -> dict[str, Any] | None:
        """The endpoint's ModelInfo for `model` (`GET /v1/models/{id}`), asked once; None when the
        endpoint has no models API or could not answer. Raises `UnknownModel` for a 404."""
        from urllib.parse import quote

        from agent_repl.core.api.wire import APIStatusError

        if model in self._model_data:
            return self._model_data[model]
        data: dict[str, Any] | None = None
        try:
            answer = await self.wire().get_json(f"/v1/models/{quote(model, safe='')}", betas=[ON_DEMAND_COMPACTION_BETA])
            data = answer if isinstance(answer, dict) else None
        except APIStatusError as exc:
            if exc.status_code == 404 and is_model_not_found(exc, model):
                raise UnknownModel(model) from exc
        except Exception:  # no models API here (a proxy, an old endpoint): the table decides
            data = None
        self._model_data[model] = data
        return data

    async def model_listing(self) -> dict[str, dict[str, Any]] | None:
        """Every listed model's ModelInfo (`GET /v1/models`, all pages), by id; None when the
        endpoint has no models API or could not answer."""
        try:
            pages = self.wire().pages("/v1/models", 1000, betas=[ON_DEMAND_COMPACTION_BETA])
            return {str(m["id"]): m async for m in pages}
        except Exception:  # no models API here (a proxy, an old endpoint): the table decides
            return None

    async def list_models(self) -> list[dict[str, Any]]:
        """Every model the endpoint lists (`GET /v1/models`, all pages), newest first; [] on failure."""
        try:
            return [m async for m in self.wire().pages("/v1/models", 100)]
        except Exception:
            return []

    async def close(self) -> None:
        if self._wire is not None:
            await self._wire.close()
