"""Task: the model starts a sub-agent for one task and gets its final answer back (docs/architecture.md 7.3).

The tool runs nothing itself: the session lends it the sub-agent runner (agent_repl.agents) as a
port (`ctx.ports.subagents`), as it does the snip callback, and the tool hands the call over. The runner
is also what lists the agent types in this tool's description, once, at start.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field

from agent_repl.core.tooling.display import BodyKind, ToolDisplay, plural, structured_dict
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, load_description
from agent_repl.tools._common import ToolArgs

TASK_TOOL_NAME = "Task"


class TaskArgs(ToolArgs):
    description: str = Field(min_length=1, description="A short (3-5 word) description of the task")
    prompt: str = Field(min_length=1, description="The task for the agent to perform")
    subagent_type: str | None = Field(default=None, description="The type of agent to use for this task")


class TaskDisplay(ToolDisplay):
    """A sub-agent's box; once it is done, what it took."""

    body = BodyKind.SUBTASK

    def summary(self, tool_input: Mapping[str, Any], structured: Any) -> str | None:
        info = structured_dict(structured)
        if "totalToolUseCount" not in info:
            return None
        seconds = (info.get("totalDurationMs") or 0) / 1000
        tokens = info.get("totalTokens") or 0
        return f"Done ({plural(info['totalToolUseCount'], 'tool use')} · {tokens:,} tokens · {seconds:.1f}s)"


class Task(Tool[TaskArgs]):
    name = TASK_TOOL_NAME
    display: ClassVar[ToolDisplay] = TaskDisplay()
    args_model = TaskArgs
    # It changes nothing itself (its sub-agent's tools ask for themselves), so several run at once.
    is_read_only: ClassVar[bool] = True
    # What the transcript keeps of a result persisted for its size (claude-code-log links the sub-agent by agentId).
    kept_when_persisted: ClassVar[frozenset[str]] = frozenset(
        {"agentId", "status", "totalDurationMs", "totalTokens", "totalToolUseCount", "usage"}
    )

    def __init__(self, agent_types: str) -> None:
        self.description = f"{load_description(__file__, 'task')}\n\nAgent types:\n{agent_types}"

    async def run(self, args: TaskArgs, ctx: ToolContext) -> ToolOutput:
        starter = ctx.ports.subagents
        if starter is None:
            return ToolOutput.error("Error: sub-agents are not available in this session.")
        return await starter.run_task(args, ctx)
