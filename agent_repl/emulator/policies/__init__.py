"""Who answers in place of the model: `script`, `demo` and `callable` policies."""

from __future__ import annotations

from agent_repl.emulator.policies.base import Policy, PolicyRequest, Reply
from agent_repl.emulator.policies.callable import CallablePolicy
from agent_repl.emulator.policies.demo import DemoPolicy
from agent_repl.emulator.policies.script import ScenarioError, ScriptPolicy

__all__ = [
    "CallablePolicy",
    "DemoPolicy",
    "Policy",
    "PolicyRequest",
    "Reply",
    "ScenarioError",
    "ScriptPolicy",
    "policy_from_spec",
]


def policy_from_spec(spec: str) -> Policy:
    """`demo` or `script:PATH` (the `--policy` option)."""
    if spec == "demo":
        return DemoPolicy()
    if spec.startswith("script:") and len(spec) > len("script:"):
        return ScriptPolicy.from_file(spec[len("script:") :])
    raise ValueError(f"unknown policy {spec!r}: use `demo` or `script:FILE`")
