"""The `script` policy: replay a JSON scenario step by step.

    {"steps": [{"text"?, "thinking"?, "tools"?: [{"name", "input"}], "stop_reason"?,
                "stop_details"?: {"category"?, "explanation"?}}, ...]}

Sub-agents get their own scripts: `"agents": [{"prompt": ..., "steps": [...]}]`. A request whose
first user message contains an agent's `prompt` is a turn of that conversation and is answered
from its steps, with a cursor of its own, so sub-agents running at the same time never take
each other's steps (the main conversation is every other request).

A step may script any stop reason: `refusal` (with its `stop_details`; the text, if any, is what
was written before the refusal), `pause_turn`, `max_tokens`, `model_context_window_exceeded`.

The cursor advances only when a response completes, and a request the model would see
identically to one already answered gets that same step again, so a retry neither skips nor
repeats a step (on another model too), except after a refusal: the refused request sent to
another model (a fallback) is a new request and takes the next step. Tool_use ids derive from
the scenario, the step and the tool's index.
Compaction and memory requests are answered by the request's summarizer and use no step.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_repl.emulator.blocks import digest, strip_bookkeeping
from agent_repl.emulator.policies.base import (
    PolicyRequest,
    Reply,
    summary_reply,
    text_block,
    thinking_block,
    tool_use_block,
    tool_use_id,
)
from agent_repl.emulator.policies.summary import request_kind


class ScenarioError(ValueError):
    """A scenario file or object that cannot be replayed."""


class _ScenarioTool(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    input: dict[str, Any] = Field(default_factory=dict)


class _RefusalDetails(BaseModel):
    model_config = ConfigDict(extra="forbid")

    category: Literal["cyber", "bio", "frontier_llm", "reasoning_extraction", "general_harms"] | None = None
    explanation: str | None = None


class _ScenarioStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    thinking: str | None = None
    tools: list[_ScenarioTool] = Field(default_factory=list)
    stop_reason: (
        Literal[
            "end_turn",
            "max_tokens",
            "stop_sequence",
            "tool_use",
            "pause_turn",
            "refusal",
            "model_context_window_exceeded",
        ]
        | None
    ) = None
    stop_details: _RefusalDetails | None = None


class _AgentScript(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1)
    steps: list[_ScenarioStep]


class _Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")

    steps: list[_ScenarioStep]
    agents: list[_AgentScript] = Field(default_factory=list)


def _first_user_text(body: dict[str, Any]) -> str:
    for message in body.get("messages") or []:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _request_key(request: PolicyRequest) -> str:
    if request.conversation_key:
        return request.conversation_key
    body = request.body
    parts = {
        "system": body.get("system"),
        "tools": [strip_bookkeeping(t) for t in body.get("tools") or [] if isinstance(t, dict)],
        "messages": [
            {"role": m.get("role"), "content": [strip_bookkeeping(b) for b in m["content"]]}
            if isinstance(m.get("content"), list)
            else m
            for m in body.get("messages") or []
        ],
    }
    return digest(parts).hex()


class ScriptPolicy:
    def __init__(self, scenario: dict[str, Any], *, scenario_id: str | None = None) -> None:
        try:
            parsed = _Scenario.model_validate(scenario)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            raise ScenarioError(f"scenario: {where}: {first['msg']}") from exc
        self.steps = parsed.steps
        self._scenario_id = scenario_id or digest(scenario).hex()[:16]
        # Each sub-agent's script, with an id of its own (its tool_use ids differ from the main ones).
        self._agents = [
            (
                agent.prompt,
                ScriptPolicy(
                    {"steps": [step.model_dump(exclude_none=True) for step in agent.steps]},
                    scenario_id=digest([self._scenario_id, agent.prompt]).hex()[:16],
                ),
            )
            for agent in parsed.agents
        ]
        self._cursor = 0
        self._memo: dict[str, int] = {}
        self._in_flight: dict[str, int] = {}
        # Requests whose step was a refusal, and the model that refused.
        self._refused: dict[str, str] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptPolicy:
        source = Path(path)
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ScenarioError(f"{source}: cannot read scenario: {exc.strerror or exc}") from exc
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"{source}: not valid JSON: {exc.msg} at line {exc.lineno}") from exc
        if not isinstance(data, dict):
            raise ScenarioError(f"{source}: a scenario is an object with a `steps` list")
        try:
            return cls(data)
        except ScenarioError as exc:
            raise ScenarioError(f"{source}: {exc}") from exc

    def reset(self) -> None:
        """Start the scenario over."""
        for _, agent in self._agents:
            agent.reset()
        with self._lock:
            self._cursor = 0
            self._memo.clear()
            self._in_flight.clear()
            self._refused.clear()

    @property
    def cursor(self) -> int:
        """The index of the next unanswered step."""
        return self._cursor

    def _agent_for(self, request: PolicyRequest) -> ScriptPolicy | None:
        if not self._agents:
            return None
        first = _first_user_text(request.body)
        return next((agent for prompt, agent in self._agents if prompt in first), None)

    def _key(self, request: PolicyRequest) -> str:
        key = _request_key(request)
        model = str(request.body.get("model"))
        refused_by = self._refused.get(key)
        return key if refused_by is None or refused_by == model else f"{key}\x1f{model}"

    def reply(self, request: PolicyRequest) -> Reply:
        kind = request_kind(request.body)
        if kind is not None:
            return summary_reply(request, kind)
        agent = self._agent_for(request)
        if agent is not None:
            return agent.reply(request)
        with self._lock:
            key = self._key(request)
            step = self._memo.get(key)
            if step is None:
                step = self._in_flight.setdefault(key, self._cursor)
        return self.step_reply(step)

    def completed(self, request: PolicyRequest, reply: Reply) -> None:
        if request_kind(request.body) is not None:
            return
        agent = self._agent_for(request)
        if agent is not None:
            agent.completed(request, reply)
            return
        with self._lock:
            key = self._key(request)
            if reply.stop_reason == "refusal":
                self._refused.setdefault(key, str(request.body.get("model")))
            if key in self._memo:
                return
            step = self._in_flight.pop(key, self._cursor)
            self._memo[key] = step
            self._cursor = max(self._cursor, min(step + 1, len(self.steps)))

    def step_reply(self, index: int) -> Reply:
        if index >= len(self.steps):
            return Reply(
                [text_block(f"The script is finished: all {len(self.steps)} steps have been answered.")]
            )
        step = self.steps[index]
        content = []
        if step.thinking is not None:
            content.append(thinking_block(step.thinking))
        if step.text:
            content.append(text_block(step.text))
        for position, tool in enumerate(step.tools):
            content.append(
                tool_use_block(tool_use_id(self._scenario_id, index, position), tool.name, tool.input)
            )
        default = "tool_use" if step.tools else "end_turn"
        stop_reason = step.stop_reason or default
        details = None
        if stop_reason == "refusal":
            given = step.stop_details or _RefusalDetails()
            details = {"type": "refusal", **given.model_dump()}
        return Reply(content, stop_reason, details)
