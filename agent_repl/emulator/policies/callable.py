"""The `callable` policy: a Python function answers, for in-process tests."""

from __future__ import annotations

from collections.abc import Callable

from agent_repl.emulator.policies.base import PolicyRequest, Reply


class CallablePolicy:
    def __init__(self, answer: Callable[[PolicyRequest], Reply]) -> None:
        self._answer = answer

    def reply(self, request: PolicyRequest) -> Reply:
        return self._answer(request)

    def completed(self, request: PolicyRequest, reply: Reply) -> None:
        pass
