"""`EmulatorServer`: the emulator on a loopback port, in a background thread or in the foreground.

In-process use (tests):

    with EmulatorServer(policy=my_policy) as emu:           # or: async with EmulatorServer(...)
        client = anthropic.Anthropic(base_url=emu.base_url, api_key="test")

uvicorn runs with its own event loop in a daemon thread, so sync and async SDK clients in the
calling thread can both talk to it. The listening socket is bound before the thread starts, so
`base_url` (with the real port when port=0) is valid as soon as `start()` returns.

It listens on loopback only, and its `/_emulator` control routes need `control_token` (random
per server unless given), sent as `control_headers`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import secrets
import socket
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import uvicorn

from agent_repl.emulator.app import DEFAULT_MAX_BODY_BYTES, EmulatorState, build_app
from agent_repl.emulator.engine import Engine
from agent_repl.emulator.faults import FaultPlan
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import CallablePolicy
from agent_repl.emulator.policies.summary import Summarizer
from agent_repl.emulator.recording import Recorder, RecordLimit
from agent_repl.emulator.responses import silence_drop_logs


class AdjustableClock:
    """Wall-clock time plus an offset that tests (or `POST /_emulator/clock`) move forward."""

    def __init__(self, base: Callable[[], float] = time.time) -> None:
        self._base = base
        self._offset = 0.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._base() + self._offset

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._offset += seconds


def build_engine(
    models: dict[str, Any],
    policy: Any,
    clock: Callable[[], float],
    context_window: int | None,
    *,
    cache_editing: bool = False,
    thinking_prefix_enforced: bool = True,
    web_tools_enabled: bool = True,
    summarizer: Summarizer | None = None,
) -> Any:
    """An Engine for `policy`: a Policy object, or a plain function of PolicyRequest -> Reply."""
    if not hasattr(policy, "reply") and callable(policy):
        policy = CallablePolicy(policy)
    return Engine(
        models,
        policy,
        clock=clock,
        context_window=context_window,
        cache_editing=cache_editing,
        thinking_prefix_enforced=thinking_prefix_enforced,
        web_tools_enabled=web_tools_enabled,
        summarizer=summarizer,
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


class EmulatorServer:
    """The emulator's HTTP server; `engine`, `recordings`, `faults`, `clock` are live handles."""

    def __init__(
        self,
        *,
        policy: Any = None,
        engine: Any = None,
        models: dict[str, Any] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        context_window: int | None = None,
        faults: FaultPlan | str | None = None,
        clock: Callable[[], float] | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        seed: int = 0,
        record_limit: RecordLimit | None = None,
        control_token: str | None = None,
        cache_editing: bool = False,
        thinking_prefix_enforced: bool = True,
        web_tools_enabled: bool = True,
        summarizer: Summarizer | None = None,
    ) -> None:
        """The public Messages API by default. `cache_editing` adds our cache-editing beta (the
        public API has none); `thinking_prefix_enforced=False` plays an account created before
        2026-08-31, where the preserved-thinking prefix check fails a request only when asked.
        `summarizer` writes summaries when asked for one (a few plain lines by default; the agent's
        nine sections are `agent_repl.offline.summary.AgentSummarizer`)."""
        if not is_loopback(host):
            raise ValueError(f"the emulator listens on loopback only (127.0.0.1 or ::1), not {host!r}")
        if models is None:
            models = default_model_table()
        self.host = host
        self.port = port
        self.models = models
        self.context_window = context_window
        self.engine_options: dict[str, Any] = {
            "cache_editing": cache_editing,
            "thinking_prefix_enforced": thinking_prefix_enforced,
            "web_tools_enabled": web_tools_enabled,
            "summarizer": summarizer,
        }
        self.clock: Callable[[], float] = clock if clock is not None else AdjustableClock()
        if engine is None:
            if policy is None:
                raise ValueError("EmulatorServer needs a policy (or a ready engine)")
            engine = build_engine(models, policy, self.clock, context_window, **self.engine_options)
        self.faults = faults if isinstance(faults, FaultPlan) else FaultPlan.parse(faults)
        self.recordings = Recorder(record_limit)
        self.control_token = control_token or secrets.token_urlsafe(24)
        self.state = EmulatorState(
            engine, self.recordings, self.faults, self.clock, max_body_bytes, control_token=self.control_token
        )
        self.state.rng.seed(seed)
        self.app = build_app(self.state)
        self._uvicorn: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def engine(self) -> Any:
        return self.state.engine

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def control_headers(self) -> dict[str, str]:
        """The header every `/_emulator` control route needs."""
        return {"x-emulator-token": self.control_token}

    def reset(self, *, policy: Any = None, engine: Any = None) -> None:
        """Forget recordings, faults and the request counter; with a policy, start a fresh engine."""
        self.recordings.clear()
        self.faults.clear()
        self.state.request_count = 0
        if engine is None and policy is not None:
            engine = build_engine(self.models, policy, self.clock, self.context_window, **self.engine_options)
        if engine is not None:
            self.state.engine = engine

    def _config(self) -> uvicorn.Config:
        silence_drop_logs()
        return uvicorn.Config(
            self.app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            loop="asyncio",
            http="h11",
            ws="none",
            timeout_graceful_shutdown=1,
            timeout_keep_alive=30,
        )

    def _run(self, sock: socket.socket) -> None:
        assert self._uvicorn is not None
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._uvicorn.serve(sockets=[sock]))
        finally:
            sock.close()
            loop.close()

    def start(self) -> EmulatorServer:
        if self._thread is not None:
            raise RuntimeError("the emulator is already running")
        sock = bind_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        self.state.stopping = asyncio.Event()
        self._uvicorn = uvicorn.Server(self._config())
        self._thread = threading.Thread(
            target=self._run, args=(sock,), name="agent-repl-emulator", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread, loop = self._uvicorn, self._thread, self._loop
        if server is None or thread is None:
            return
        server.should_exit = True
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self.state.stopping.set)
            except RuntimeError:  # the loop closed between the check and the call
                pass
        thread.join(timeout=10)
        self._uvicorn = self._thread = self._loop = None

    def serve_forever(self, announce: Callable[[str], None] | None = None, sock: socket.socket | None = None) -> None:
        """Run in the calling thread until interrupted (the CLI); `announce` gets the URL once bound.
        `sock`: a listening loopback socket to serve on (one a parent process bound), instead of
        binding `host` and `port`."""
        if sock is None:
            sock = bind_socket(self.host, self.port)
        self.host, self.port = sock.getsockname()[:2]
        if announce is not None:
            announce(self.base_url)
        server = uvicorn.Server(self._config())
        try:
            server.run(sockets=[sock])
        finally:
            sock.close()

    def __enter__(self) -> EmulatorServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> EmulatorServer:
        return self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)
