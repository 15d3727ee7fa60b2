"""ExitPlanMode: in plan mode, the model presents its plan; the user approves it or keeps planning.

The approval itself is the permission prompt (`agent_repl.core.tooling.approval`): by the time this runs,
the user said yes and the session left plan mode.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from agent_repl.core.permissions.mode import PlanProposal
from agent_repl.core.tooling.display import BodyKind, ToolDisplay
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, load_description
from agent_repl.tools._common import ToolArgs


class ExitPlanModeArgs(ToolArgs):
    plan: str = Field(description="The plan to show the user for approval, in Markdown; concise but complete")


class PlanDisplay(ToolDisplay):
    """The plan, as Markdown, open."""

    body = BodyKind.PLAN


class ExitPlanMode(Tool[ExitPlanModeArgs]):
    name = "ExitPlanMode"
    display: ClassVar[ToolDisplay] = PlanDisplay()
    args_model = ExitPlanModeArgs
    description = load_description(__file__, "exit_plan_mode")

    async def prepare(self, args: ExitPlanModeArgs, ctx: ToolContext) -> ToolOutput | Any:
        return PlanProposal(args.plan)

    async def run(self, args: ExitPlanModeArgs, ctx: ToolContext) -> ToolOutput:
        text = (
            "The user approved your plan and plan mode is off. Start on it now, following the plan; "
            "if it has several steps, track them with TodoWrite."
        )
        return ToolOutput(
            content=text,
            structured={"plan": args.plan, "filePath": None, "isAgent": False, "approved": True},
            summary="plan approved",
        )
