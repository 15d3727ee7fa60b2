"""Streaming one request through the official `anthropic` SDK.

The SDK retries failures that happen before a stream starts (429, 5xx, connection errors),
honouring `retry-after`. A failure after the stream started is never retried by the SDK;
`is_retryable_stream_failure` tells the loop which of those it may retry itself. The SDK is
imported on first use, so starting the app does not wait for it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from agent_repl.core.api.betas import ON_DEMAND_COMPACTION_BETA, request_betas
from agent_repl.core.model.events import StreamEvent, TextDelta, ThinkingDelta
from agent_repl.core.model.messages import ContentBlock, Usage

_BLOCKS = TypeAdapter(list[ContentBlock])
RETRYABLE_STREAM_ERROR_TYPES = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
# The stream's own event types (the SDK adds helper events such as `text` between them).
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


def usage_from_sdk(usage: Any) -> Usage:
    data = usage.model_dump() if hasattr(usage, "model_dump") else dict(usage)
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


def _content_from_sdk(content: list[Any]) -> list[ContentBlock]:
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
    for block in content:
        data = block.model_dump() if hasattr(block, "model_dump") else dict(block)
        if data.get("type") in whole:
            blocks.append(block.model_dump(mode="json", exclude_none=True) if hasattr(block, "model_dump") else data)
            continue
        if data.get("type") == "text" and data.get("citations"):
            blocks.append({"type": "text", "text": data["text"], "citations": _dumped(data["citations"])})
            continue
        keys = allowed.get(data.get("type", ""))
        if keys is None:
            continue  # server-side block kinds this agent does not use
        blocks.append({k: data[k] for k in keys if data.get(k) is not None or k == "type"})
    return _BLOCKS.validate_python(blocks)


def _dumped(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, list):
        return [_dumped(v) for v in value]
    return value.model_dump() if hasattr(value, "model_dump") else value


def _raw_event(event: Any, sent: float) -> StreamEvent:
    """The event as the API sent it: the SDK's running snapshots (the block or message so far, on
    the stop events) are left out; the first carries the time to it from the request."""
    data = event.model_dump(mode="json", exclude_unset=True)
    data.pop({"content_block_stop": "content_block", "message_stop": "message"}.get(event.type, ""), None)
    ttft = round((time.monotonic() - sent) * 1000) if event.type == "message_start" else None
    return StreamEvent(event=data, ttft_ms=ttft)


class UnknownModel(Exception):
    """The endpoint answered 404 for this model id."""


def is_model_not_found(exc: BaseException, model: str) -> bool:
    """A 404 about the model itself, not an endpoint that has no models API at all."""
    body = getattr(exc, "body", None)
    error = body.get("error") if isinstance(body, dict) else None
    message = str(error.get("message") or "") if isinstance(error, dict) else ""
    return message.startswith("model:") or model in message


def is_retryable_stream_failure(exc: BaseException) -> bool:
    """A failure mid-stream that a fresh request may fix: overload, a server error, a dropped connection."""
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        if exc.status_code == 200:
            body = exc.body if isinstance(exc.body, dict) else {}
            error = body.get("error") if isinstance(body.get("error"), dict) else body
            return (error or {}).get("type") in RETRYABLE_STREAM_ERROR_TYPES
        return False
    if isinstance(exc, anthropic.APIConnectionError):
        return True
    # A connection dropped while reading the stream surfaces as the transport's own error.
    module = type(exc).__module__
    return module.startswith(("httpx", "httpcore", "h11")) or isinstance(exc, ConnectionError)


# Noted on an error raised while a reply was streaming (after the response had begun).
MID_REPLY = "agent-repl: raised mid-reply"


def describe_api_error(exc: BaseException) -> str:
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        error = body.get("error") if isinstance(body.get("error"), dict) else {}
        message = (error or {}).get("message") or str(exc)
        return f"API error {exc.status_code} ({(error or {}).get('type', 'error')}): {message}"
    mid_reply = MID_REPLY in getattr(exc, "__notes__", ())
    if isinstance(exc, anthropic.APIConnectionError) and mid_reply and exc.__cause__ is not None:
        exc = exc.__cause__  # newer SDKs wrap the transport's error: describe what broke
    elif isinstance(exc, anthropic.APITimeoutError):
        return "The API did not answer in time (the request timed out)."
    elif isinstance(exc, anthropic.APIConnectionError):
        return f"Could not reach the API: {exc}"
    name = type(exc).__name__
    if mid_reply or type(exc).__module__.startswith(("httpx", "httpcore", "h11")) or isinstance(exc, ConnectionError):
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
        """`read_timeout`: the longest wait for the next bytes of a response (default: `timeout`).
        `api_key` is sent as `x-api-key`; without one, `auth_token` (ANTHROPIC_AUTH_TOKEN) as a bearer token."""
        self._api_key = api_key
        self._auth_token = auth_token
        self._base_url = base_url
        self._max_retries = max_retries
        self._timeout = timeout
        self._read_timeout = read_timeout
        self._sdk: Any = None
        self._model_data: dict[str, dict[str, Any] | None] = {}

    def sdk(self) -> Any:
        if self._sdk is None:
            import anthropic

            # The read timeout bounds the gap between two stream events, so a stalled stream fails fast.
            timeout = anthropic.Timeout(self._timeout, read=self._read_timeout or self._timeout)
            self._sdk = anthropic.AsyncAnthropic(
                api_key=self._api_key,
                auth_token=None if self._api_key else self._auth_token,  # the SDK takes one of them
                base_url=self._base_url,
                max_retries=self._max_retries,
                timeout=timeout,
            )
        return self._sdk

    async def stream(
        self, body: dict[str, Any], *, raw_events: bool = False
    ) -> AsyncIterator[TextDelta | ThinkingDelta | StreamEvent | ModelResponse]:
        """Yield text and thinking deltas as they arrive (and with `raw_events` every stream event
        as the API sent it), then the complete response. The `anthropic-beta` header is read from
        the body (`request_betas`): whatever beta feature the body carries goes with its header."""
        sdk = self.sdk()
        betas = request_betas(body)
        sent = time.monotonic()
        manager = sdk.beta.messages.stream(**body, betas=betas) if betas else sdk.messages.stream(**body)
        async with manager as stream:
            try:
                async for event in stream:
                    if raw_events and event.type in RAW_STREAM_EVENTS:
                        yield _raw_event(event, sent)
                    if event.type == "text":
                        yield TextDelta(text=event.text)
                    elif event.type == "thinking":
                        yield ThinkingDelta(text=event.thinking)
            except Exception as exc:
                exc.add_note(MID_REPLY)  # the reply had begun: the SDK's error types alone do not say so
                raise
            final = await stream.get_final_message()
            yield ModelResponse(
                message_id=final.id,
                model=final.model,
                content=_content_from_sdk(final.content),
                stop_reason=final.stop_reason,
                usage=usage_from_sdk(final.usage),
                request_id=stream.request_id,
                context_management=_dumped(getattr(final, "context_management", None)),
                stop_details=_dumped(getattr(final, "stop_details", None)),
                input_transformations=_dumped(getattr(final, "input_transformations", None)),
            )

    async def model_data(self, model: str) -> dict[str, Any] | None:
        """The endpoint's ModelInfo for `model` (`GET /v1/models/{id}`), asked once; None when the
        endpoint has no models API or could not answer. Raises `UnknownModel` for a 404."""
        import anthropic

        if model in self._model_data:
            return self._model_data[model]
        data: dict[str, Any] | None = None
        try:
            info = await self.sdk().beta.models.retrieve(model, betas=[ON_DEMAND_COMPACTION_BETA])
            data = info.model_dump(mode="json")
        except anthropic.NotFoundError as exc:
            if is_model_not_found(exc, model):
                raise UnknownModel(model) from exc
        except Exception:  # no models API here (a proxy, an old endpoint): the table decides
            data = None
        self._model_data[model] = data
        return data

    async def model_listing(self) -> dict[str, dict[str, Any]] | None:
        """Every listed model's ModelInfo (`GET /v1/models`, all pages), by id; None when the
        endpoint has no models API or could not answer."""
        try:
            pages = self.sdk().beta.models.list(limit=1000, betas=[ON_DEMAND_COMPACTION_BETA])
            return {m.id: m.model_dump(mode="json") async for m in pages}
        except Exception:  # no models API here (a proxy, an old endpoint): the table decides
            return None

    async def list_models(self) -> list[dict[str, Any]]:
        """Every model the endpoint lists (`GET /v1/models`, all pages), newest first; [] on failure."""
        try:
            return [m.model_dump(mode="json") async for m in self.sdk().models.list(limit=100)]
        except Exception:
            return []

    async def close(self) -> None:
        if self._sdk is not None:
            await self._sdk.close()
