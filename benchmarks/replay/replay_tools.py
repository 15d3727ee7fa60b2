"""The replay tool executor: tools named like ours whose `run` returns the recorded output.

Nothing is executed. Each recorded call is looked up by the tool_use id the emulator's script
policy gives it (derived from the scenario, the step and the call's position, so a retried
request gets the same id), and the tool returns exactly what was recorded, so every run of a
trajectory sees the same bytes. `Bash`, `Read`, `Grep` and `Glob` present our own tools' names,
schemas, size limits and flags to the model and the pipeline; any other tool a source used
(Claude Code's `Edit`, `Task`, ...) is replayed under its own name with an open schema. With a
`Timekeeper`, the first call of a step to run moves the simulated clock by the step's tool time
(calls of one step may run side by side, so the step's time is counted once).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.tools import builtin_tools
from benchmarks.replay.timeline import SimClock
from benchmarks.replay.trajectory import NO_OUTPUT_RECORDED, Trajectory

UNKNOWN_CALL = "Error: this call is not in the recorded trajectory, so the replay has no output for it."


class AnyArgs(BaseModel):
    """Recorded inputs are replayed as they were, whatever shape they have."""

    model_config = ConfigDict(extra="allow")


@dataclass
class Timekeeper:
    """Moves the clock by a step's tool time when the first of its calls runs."""

    clock: SimClock
    seconds: list[float]  # per step, in scenario order
    step_of: dict[str, int]  # tool_use id -> its step
    timed: set[int] = field(default_factory=set)

    def ran(self, tool_use_id: str) -> None:
        step = self.step_of.get(tool_use_id)
        if step is not None and step not in self.timed:
            self.timed.add(step)
            self.clock.advance(self.seconds[step])


class ReplayTool(Tool):
    args_model: ClassVar[type[BaseModel]] = AnyArgs

    def __init__(
        self,
        name: str,
        outputs: dict[str, tuple[str, bool]],
        template: Tool | None = None,
        timekeeper: Timekeeper | None = None,
    ) -> None:
        self._name = name
        self.outputs = outputs
        self.timekeeper = timekeeper
        self.calls: list[str] = []
        self._schema = template.api_schema() if template is not None else {
            "name": name,
            "description": f"{name} (replayed from a recorded session).",
            "input_schema": {"type": "object", "additionalProperties": True},
        }
        if template is not None:
            self.max_result_size_chars = template.max_result_size_chars
            self.is_read_only = template.is_read_only
            self.microcompact_clearable = template.microcompact_clearable
        else:
            self.is_read_only = False
            self.microcompact_clearable = False

    @property  # type: ignore[override]
    def name(self) -> str:  # the class attribute of real tools; one instance per recorded name here
        return self._name

    def api_schema(self) -> dict[str, Any]:
        return self._schema

    def parse_args(self, raw: dict[str, Any]) -> BaseModel | ToolOutput:
        return AnyArgs.model_validate(raw)

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        self.calls.append(ctx.tool_use_id)
        if self.timekeeper is not None:
            self.timekeeper.ran(ctx.tool_use_id)
        recorded = self.outputs.get(ctx.tool_use_id)
        if recorded is None:
            return ToolOutput.error(UNKNOWN_CALL)
        text, is_error = recorded
        structured = bash_structured(text, is_error) if self._name == "Bash" else None
        return ToolOutput(
            content=text, is_error=is_error, structured=structured, summary=text.splitlines()[0][:80] if text else ""
        )


def bash_structured(text: str, is_error: bool) -> dict[str, Any]:
    """The structured result our Bash tool gives with its text (its exit code, the merged output), so
    a command that exited non-zero counts as one that ran, as it does in a live session."""
    head, _, rest = text.partition("\n")
    code = int(head.removeprefix("Exit code ")) if is_error and re.fullmatch(r"Exit code \d+", head) else 0
    return {
        "stdout": rest if code else text,
        "stderr": "",
        "interrupted": False,
        "isImage": False,
        "returnCode": code if code else (1 if is_error else 0),
        "outputMerged": True,
    }


def _step_ids(trajectory: Trajectory, scenario: dict[str, Any]) -> list[list[str]]:
    """The tool_use ids the script policy gives each step's calls, in order."""
    policy = ScriptPolicy(scenario)
    steps = [step for turn in trajectory.turns for step in turn.steps]
    found = []
    for index, step in enumerate(steps):
        reply = policy.step_reply(index)
        ids = [block["id"] for block in reply.content if block.get("type") == "tool_use"]
        assert len(ids) == len(step.tools), "the scenario and the trajectory disagree"
        found.append(ids)
    return found


def recorded_outputs(trajectory: Trajectory, scenario: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    """tool_use id -> (recorded output, is_error), with the ids the script policy will give the calls."""
    steps = [step for turn in trajectory.turns for step in turn.steps]
    table: dict[str, tuple[str, bool]] = {}
    for ids, step in zip(_step_ids(trajectory, scenario), steps, strict=True):
        for tool_use_id, call in zip(ids, step.tools, strict=True):
            table[tool_use_id] = (call.output or NO_OUTPUT_RECORDED, call.is_error)
    return table


def timekeeper(trajectory: Trajectory, scenario: dict[str, Any], clock: SimClock) -> Timekeeper:
    steps = [step for turn in trajectory.turns for step in turn.steps]
    step_of = {tool_use_id: index for index, ids in enumerate(_step_ids(trajectory, scenario)) for tool_use_id in ids}
    return Timekeeper(clock, [step.tool_seconds or 0.0 for step in steps], step_of)


def replay_tools(trajectory: Trajectory, scenario: dict[str, Any], clock: SimClock | None = None) -> list[Tool]:
    """Our tool list with each tool replaced by its replay, plus the other names the source used.

    Snip stays real: the pipeline's own tool, which a recorded model never calls.
    """
    table = recorded_outputs(trajectory, scenario)
    keeper = timekeeper(trajectory, scenario, clock) if clock is not None else None
    ours = {tool.name: tool for tool in builtin_tools()}
    tools: list[Tool] = [ours["Snip"]]
    for name in sorted((set(ours) - {"Snip"}) | trajectory.tool_names()):
        tools.append(ReplayTool(name, table, ours.get(name), keeper))
    return tools
