"""Who answers in place of the model: `script` and `callable` policies.

The offline demo model, which understands the agent's own requests, lives with the offline mode
(agent_repl.offline) and comes in as a named policy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from agent_repl.emulator.policies.base import Policy, PolicyRequest, Reply
from agent_repl.emulator.policies.callable import CallablePolicy
from agent_repl.emulator.policies.script import ScenarioError, ScriptPolicy

__all__ = [
    "CallablePolicy",
    "Policy",
    "PolicyRequest",
    "Reply",
    "ScenarioError",
    "ScriptPolicy",
    "policy_from_spec",
]


def policy_from_spec(spec: str, named: Mapping[str, Callable[[], Policy]] | None = None) -> Policy:
    """`script:PATH`, or one of the `named` policies the caller offers (the `--policy` option)."""
    named = named or {}
    if spec in named:
        return named[spec]()
    if spec.startswith("script:") and len(spec) > len("script:"):
        return ScriptPolicy.from_file(spec[len("script:") :])
    choices = " or ".join([*(f"`{name}`" for name in named), "`script:FILE`"])
    raise ValueError(f"unknown policy {spec!r}: use {choices}")
