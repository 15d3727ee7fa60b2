"""The ASGI app: the `/v1` API routes and the `/_emulator` control routes.

A `POST /v1/messages` goes: body size (413) -> auth (401) -> injected fault -> JSON -> field
schema -> model lookup (404) -> conversation rules -> engine.prepare -> context window ->
engine.respond -> JSON body or SSE stream. Every `/v1` exchange is recorded.

The `/_emulator` control routes read the conversation and steer the server, so each needs the
per-run control token in an `x-emulator-token` header (another local user can reach a loopback
port too).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from agent_repl.emulator import errors, sse
from agent_repl.emulator.errors import ApiError, invalid_request, new_id
from agent_repl.emulator.faults import FaultKind, FaultPlan
from agent_repl.emulator.model_info import model_info, models_page
from agent_repl.emulator.recording import Exchange, Recorder
from agent_repl.emulator.request_error import EmulatorRequestError
from agent_repl.emulator.responses import DroppedResponse, EventStreamResponse
from agent_repl.emulator.schema import COUNT_BODY, CREATE_BODY, check_body
from agent_repl.emulator.validation import validate_count, validate_create

DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
log = logging.getLogger(__name__)


@dataclass
class EmulatorState:
    """Everything the routes share; owned by one EmulatorServer."""

    engine: Any
    recorder: Recorder
    faults: FaultPlan
    clock: Callable[[], float]
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    request_count: int = 0
    control_token: str = ""

    def next_request_index(self) -> int:
        index = self.request_count
        self.request_count += 1
        return index


def _line_col(doc: str, pos: int) -> tuple[int, int]:
    line = doc.count("\n", 0, pos) + 1
    return line, pos - (doc.rfind("\n", 0, pos) + 1) + 1


def _json_error_text(doc: str, err: json.JSONDecodeError | None) -> str:
    """The parse error in the API's words: `<problem>: line L column C (char P)` (its parser's style)."""
    if err is None:
        return "The request body is not valid JSON: str is not valid UTF-8"
    pos = err.pos
    if not doc.strip():
        problem, pos = "Input is a zero-length, empty document", 0
    elif err.msg.startswith("Extra data"):
        problem = "unexpected content after document"
    elif err.msg.startswith("Unterminated string") or pos >= len(doc.rstrip()):
        problem, pos = "unexpected end of data", len(doc)
    else:
        problem = "unexpected character"
    line, col = _line_col(doc, pos)
    return f"The request body is not valid JSON: {problem}: line {line} column {col} (char {pos})"


class _NonStandardConstant(ValueError):
    """NaN / Infinity: Python's parser takes them, the API's does not."""


def _reject_constant(name: str) -> Any:
    raise _NonStandardConstant(name)


def parse_json(raw: bytes) -> Any:
    try:
        doc = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise invalid_request(_json_error_text("", None)) from None
    try:
        return json.loads(doc, parse_constant=_reject_constant)
    except json.JSONDecodeError as err:
        raise invalid_request(_json_error_text(doc, err)) from None
    except _NonStandardConstant as err:
        at = max(0, doc.find(str(err)))  # the first such token; good enough for a rare input
        raise invalid_request(
            _json_error_text(doc, json.JSONDecodeError("Expecting value", doc, at))
        ) from None


def api_key_of(request: Request) -> str:
    key = request.headers.get("x-api-key", "").strip()
    if not key:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        key = token.strip() if scheme.lower() == "bearer" else ""
    if not key:
        raise errors.authentication_missing()
    return key


def betas_of(request: Request) -> set[str]:
    return {b.strip() for b in request.headers.get("anthropic-beta", "").split(",") if b.strip()}


async def read_body(request: Request, limit: int) -> tuple[bytes, bool]:
    """The body, or (prefix, True) when it is over `limit`; the rest is drained so the client sees the 413."""
    kept: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size <= limit:
            kept.append(chunk)
    return b"".join(kept), size > limit


def error_response(err: ApiError, request_id: str, exchange: Exchange | None) -> Response:
    body = err.body(request_id)
    if exchange is not None:
        exchange.status, exchange.response_body, exchange.finished = err.status, body, True
    return JSONResponse(body, status_code=err.status, headers=err.response_headers(request_id))


def _engine_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except EmulatorRequestError as err:
        raise ApiError(err.status, err.message, error_type=err.error_type) from None


@dataclass
class Call:
    """One `/v1` request on its way through a route."""

    request: Request
    exchange: Exchange
    request_id: str
    raw: bytes


# What a route answers: a plain response, or one of the emulator's own streaming ASGI responses.
Answer = Response | EventStreamResponse | DroppedResponse
Work = Callable[[Call], "Answer | dict[str, Any]"]


class Routes:
    def __init__(self, state: EmulatorState) -> None:
        self.state = state

    def lookup(self, model: str) -> Any:
        return _engine_call(self.state.engine.resolve, model)

    async def _serve(self, request: Request, work: Work, *, counted: bool = False) -> Answer:
        """Record the exchange, run `work`, and turn every failure into an API-shaped error."""
        raw, too_large = await read_body(request, self.state.max_body_bytes)
        exchange = self.state.recorder.start(
            request.method,
            request.url.path,
            request.url.query,
            dict(request.headers),
            raw,
            self.state.clock(),
        )
        if counted:
            exchange.request_index = self.state.next_request_index()
        request_id = new_id("req_", self.state.rng)
        try:
            if too_large:
                raise errors.request_too_large()
            result = work(Call(request, exchange, request_id, raw))
        except ApiError as err:
            return error_response(err, request_id, exchange)
        except Exception:  # an emulator or policy bug: answer like the API, keep serving
            log.exception("emulator failure on %s %s", request.method, request.url.path)
            return error_response(errors.internal_server_error(), request_id, exchange)
        if isinstance(result, dict):
            exchange.status, exchange.response_body, exchange.finished = 200, result, True
            response = JSONResponse(result, headers={"request-id": request_id})
            exchange.response_bytes = len(response.body)
            return response
        return result

    async def create_message(self, request: Request) -> Answer:
        return await self._serve(request, self._create, counted=True)

    def _raise_status_fault(self, fault: FaultKind | None, model: str) -> None:
        retry = self.state.faults.retry_headers()
        if fault is FaultKind.RATE_LIMIT:
            raise errors.rate_limited(model, retry)
        if fault is FaultKind.OVERLOADED:
            raise errors.overloaded(retry)
        if fault is FaultKind.SERVER_ERROR:
            raise errors.internal_server_error(retry)

    def _create(self, call: Call) -> Answer | dict[str, Any]:
        api_key = api_key_of(call.request)
        index = call.exchange.request_index
        assert index is not None
        fault = self.state.faults.take(index)
        call.exchange.fault = fault.value if fault else None
        try:
            body = parse_json(call.raw)
        except ApiError:
            self._raise_status_fault(fault, "unknown")  # an injected status fault wins over bad JSON
            raise
        self._raise_status_fault(fault, str(body.get("model") if isinstance(body, dict) else "unknown"))
        betas = betas_of(call.request)
        check_body(body, CREATE_BODY, betas)
        validate_create(
            body, self.lookup(body["model"]), continues_paused_turn=self.state.engine.continues_paused_turn(body)
        )
        engine = self.state.engine
        prepared = _engine_call(engine.prepare, body, api_key=api_key, betas=betas, request_index=index)
        window = engine.window_for(prepared.spec)
        if fault is FaultKind.PROMPT_TOO_LONG or prepared.total_input_tokens > window:
            raise invalid_request(
                errors.prompt_too_long(max(prepared.total_input_tokens, window + 1), window)
            )
        reply = _engine_call(engine.respond, prepared)
        message = build_message(body, prepared, reply)
        call.exchange.usage = message["usage"]
        headers = {"request-id": call.request_id}
        if body.get("stream"):
            return EventStreamResponse(
                sse.message_events(message),
                headers=headers,
                exchange=call.exchange,
                request_id=call.request_id,
                on_start=lambda: engine.commit(prepared),
                on_done=lambda: engine.completed(prepared, reply),
                fault=fault,
                stall_seconds=self.state.faults.stall_seconds,
                stopping=self.state.stopping,
            )
        if fault is FaultKind.STREAM_ERROR:
            raise errors.internal_server_error(self.state.faults.retry_headers())
        if fault in (FaultKind.DROP, FaultKind.STALL):
            stall = self.state.faults.stall_seconds if fault is FaultKind.STALL else 0.0
            return DroppedResponse(
                json.dumps(message).encode(),
                headers=headers,
                exchange=call.exchange,
                stall=stall,
                stopping=self.state.stopping,
            )
        engine.commit(prepared)
        engine.completed(prepared, reply)
        return message

    async def count_tokens(self, request: Request) -> Answer:
        return await self._serve(request, self._count)

    def _count(self, call: Call) -> dict[str, Any]:
        api_key_of(call.request)
        body = parse_json(call.raw)
        betas = betas_of(call.request)
        check_body(body, COUNT_BODY, betas)
        validate_count(body, self.lookup(body["model"]))
        return _engine_call(self.state.engine.count_tokens, body, betas=betas)

    async def list_models(self, request: Request) -> Answer:
        def page(call: Call) -> dict[str, Any]:
            api_key_of(call.request)
            engine = self.state.engine
            return models_page(engine.models, engine, call.request.query_params)

        return await self._serve(request, page)

    async def get_model(self, request: Request) -> Answer:
        def info(call: Call) -> dict[str, Any]:
            api_key_of(call.request)
            return model_info(self.lookup(call.request.path_params["model_id"]), self.state.engine)

        return await self._serve(request, info)

    # Control routes: not recorded, and only for whoever holds the control token.

    async def recorded(self, request: Request) -> Response:
        since = request.query_params.get("since", "0")
        if not since.isdigit():
            return error_response(
                invalid_request("since: Input should be a whole number"), new_id("req_", self.state.rng), None
            )
        recorder = self.state.recorder
        headers = {"x-emulator-dropped": str(recorder.dropped)}
        return JSONResponse(recorder.to_list(int(since)), headers=headers)

    async def usage(self, request: Request) -> Response:
        return JSONResponse(self.state.engine.usage_totals())

    async def reset(self, request: Request) -> Response:
        self.state.recorder.clear()
        self.state.faults.clear()
        self.state.request_count = 0
        reset_engine = getattr(self.state.engine, "reset", None)
        if callable(reset_engine):
            reset_engine()
        return JSONResponse({"ok": True})

    async def clock(self, request: Request) -> Response:
        try:
            payload = parse_json(await request.body())
            seconds = payload.get("advance_seconds") if isinstance(payload, dict) else None
            if isinstance(seconds, bool) or not isinstance(seconds, int | float):
                raise invalid_request("advance_seconds: Input should be a valid number")
            advance = getattr(self.state.clock, "advance", None)
            if advance is None:
                raise invalid_request("this emulator runs on a clock it cannot move")
        except ApiError as err:
            return error_response(err, new_id("req_", self.state.rng), None)
        advance(float(seconds))
        return JSONResponse({"now": self.state.clock()})

    async def faults(self, request: Request) -> Response:
        if request.method == "POST":
            try:
                payload = parse_json(await request.body())
                if not isinstance(payload, dict):
                    raise invalid_request("Input should be a valid dictionary")
                if payload.get("clear"):
                    self.state.faults.clear()
                self.state.faults.apply_spec(str(payload.get("spec", "")))
            except ValueError as err:  # a bad spec item
                return error_response(invalid_request(str(err)), new_id("req_", self.state.rng), None)
            except ApiError as err:
                return error_response(err, new_id("req_", self.state.rng), None)
        return JSONResponse(self.state.faults.to_dict())


def build_message(body: dict[str, Any], prepared: Any, completion: Any) -> dict[str, Any]:
    """The non-streaming Message body (§3); the SSE events are rendered from it."""
    message: dict[str, Any] = {
        "id": prepared.message_id,
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": completion.content,
        "stop_reason": completion.stop_reason,
        "stop_sequence": completion.stop_sequence,
        "stop_details": completion.stop_details,
        "container": None,
        "usage": completion.usage,
    }
    if prepared.diagnostics_requested:
        message["diagnostics"] = prepared.diagnostics
    if prepared.applied_edits is not None:
        message["context_management"] = {"applied_edits": prepared.applied_edits}
    if prepared.input_transformations is not None:
        message["input_transformations"] = prepared.input_transformations
    return message


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    error_type = errors.ERROR_TYPES.get(exc.status_code, "invalid_request_error")
    message = "Not Found" if exc.status_code == 404 else str(exc.detail)
    return JSONResponse(
        {"type": "error", "error": {"type": error_type, "message": message}, "request_id": new_id("req_")},
        status_code=exc.status_code,
    )


async def _crash(request: Request, exc: Exception) -> Response:
    """A bug in a control route still answers in the API's shape (500 api_error)."""
    return JSONResponse(
        {
            "type": "error",
            "error": {"type": "api_error", "message": f"Internal server error ({type(exc).__name__})"},
            "request_id": new_id("req_"),
        },
        status_code=500,
    )


def _needs_control_token(state: EmulatorState, route: Callable[[Request], Any]) -> Callable[[Request], Any]:
    async def guarded(request: Request) -> Response:
        given = request.headers.get("x-emulator-token", "")
        if not state.control_token or not hmac.compare_digest(given.encode(), state.control_token.encode()):
            err = ApiError(
                401, "the /_emulator routes need this run's control token in an x-emulator-token header"
            )
            return error_response(err, new_id("req_", state.rng), None)
        return await route(request)

    return guarded


def build_app(state: EmulatorState) -> ASGIApp:
    routes = Routes(state)

    def control(path: str, route: Callable[[Request], Any], methods: list[str]) -> Route:
        return Route(path, _needs_control_token(state, route), methods=methods)

    return Starlette(
        routes=[
            Route("/v1/messages", routes.create_message, methods=["POST"]),
            Route("/v1/messages/count_tokens", routes.count_tokens, methods=["POST"]),
            Route("/v1/models", routes.list_models, methods=["GET"]),
            Route("/v1/models/{model_id:path}", routes.get_model, methods=["GET"]),
            control("/_emulator/requests", routes.recorded, ["GET"]),
            control("/_emulator/usage", routes.usage, ["GET"]),
            control("/_emulator/reset", routes.reset, ["POST"]),
            control("/_emulator/clock", routes.clock, ["POST"]),
            control("/_emulator/faults", routes.faults, ["GET", "POST"]),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _crash},
    )
