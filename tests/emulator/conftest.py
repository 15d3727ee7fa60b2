"""Shared fixtures: one emulator per test session, reset (fresh engine, no faults) per test.

Tests talk to it over real loopback HTTP with the official SDK. Replies come from the engine's
`callable` or `script` policy, so every answer is deterministic.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import anthropic
import pytest

from agent_repl.emulator.engine import Engine
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import CallablePolicy, PolicyRequest, Reply, ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

MODERN = "claude-sonnet-5-5"  # 1M window, 128K output, no prefill
LEGACY = "claude-haiku-4-5"  # 200K window, 64K output, prefill allowed, manual thinking
API_KEY = "sk-ant-test-emulator"


def say(text: str) -> Callable[[PolicyRequest], Reply]:
    return lambda request: Reply([{"type": "text", "text": text}])


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


@pytest.fixture(scope="session")
def emulator_session() -> Iterator[EmulatorServer]:
    server = EmulatorServer(policy=CallablePolicy(say("ok")), seed=1)
    server.faults.retry_after_ms = 5
    server.faults.stall_seconds = 5.0
    with server:
        yield server


@pytest.fixture
def emulator(emulator_session: EmulatorServer) -> EmulatorServer:
    """The session's server with a fresh engine answering "Hello from the emulator."."""
    emulator_session.reset(policy=CallablePolicy(say("Hello from the emulator.")))
    emulator_session.faults.retry_after_ms = 5
    emulator_session.faults.stall_seconds = 5.0
    return emulator_session


@pytest.fixture
def use_policy(emulator: EmulatorServer) -> Callable[..., Engine]:
    """Swap in a fresh engine: `use_policy(fn_or_policy, context_window=None, **engine_options)`."""

    def install(policy: Any, *, context_window: int | None = None, **options: Any) -> Engine:
        if callable(policy) and not hasattr(policy, "reply"):
            policy = CallablePolicy(policy)
        engine = Engine(
            default_model_table(), policy, clock=emulator.clock, context_window=context_window, **options
        )
        emulator.reset(engine=engine)
        return engine

    return install


@pytest.fixture
def use_script(use_policy: Callable[..., Engine]) -> Callable[[list[dict[str, Any]]], ScriptPolicy]:
    def install(steps: list[dict[str, Any]]) -> ScriptPolicy:
        policy = ScriptPolicy({"steps": steps})
        use_policy(policy)
        return policy

    return install


@pytest.fixture
def client(emulator: EmulatorServer) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=emulator.base_url, api_key=API_KEY, max_retries=0) as sdk:
        yield sdk


@pytest.fixture
async def async_client(emulator: EmulatorServer) -> AsyncIterator[anthropic.AsyncAnthropic]:
    async with anthropic.AsyncAnthropic(base_url=emulator.base_url, api_key=API_KEY, max_retries=0) as sdk:
        yield sdk
