"""The `script` policy: replay a JSON scenario step by step.

    {"steps": [{"text"?, "thinking"?, "tools"?: [{"name", "input"}], "stop_reason"?,
                "stop_details"?: {"category"?, "explanation"?}}, ...]}

A step may script any stop reason: `refusal` (with its `stop_details`; the text, if any, is what
was written before the refusal), `pause_turn`, `max_tokens`, `model_context_window_exceeded`.

The cursor advances only when a response completes, and a request the model would see
identically to one already answered gets that same step again, so a retry neither skips nor
repeats a step. Tool_use ids derive from the scenario, the step and the tool's index.
Compaction and memory requests are answered by the summary module and use no step.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_repl.emulator.blocks import digest, strip_bookkeeping
from agent_repl.emulator.policies import summary
from agent_repl.emulator.policies.base import (
    PolicyRequest,
    Reply,
    text_block,
    thinking_block,
    tool_use_block,
    tool_use_id,
)


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


class _Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")

    steps: list[_ScenarioStep]


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
    def __init__(self, scenario: dict[str, Any]) -> None:
        try:
            parsed = _Scenario.model_validate(scenario)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            raise ScenarioError(f"scenario: {where}: {first['msg']}") from exc
        self.steps = parsed.steps
        self._scenario_id = digest(scenario).hex()[:16]
        self._cursor = 0
        self._memo: dict[str, int] = {}
        self._in_flight: dict[str, int] = {}
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
        with self._lock:
            self._cursor = 0
            self._memo.clear()
            self._in_flight.clear()

    @property
    def cursor(self) -> int:
        """The index of the next unanswered step."""
        return self._cursor

    def reply(self, request: PolicyRequest) -> Reply:
        kind = summary.request_kind(request.body)
        if kind is not None:
            return summary.summary_reply(request.body, kind)
        key = _request_key(request)
        with self._lock:
            step = self._memo.get(key)
            if step is None:
                step = self._in_flight.setdefault(key, self._cursor)
        return self.step_reply(step)

    def completed(self, request: PolicyRequest, reply: Reply) -> None:
        if summary.request_kind(request.body) is not None:
            return
        key = _request_key(request)
        with self._lock:
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
