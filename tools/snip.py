"""Snip: the model removes earlier messages from its own context by their `[id:]` tags (docs/architecture.md 5.3).

The tool touches no file: the session lends it the context pipeline's snip through its port
(`ToolContext.ports.snip`), and the tool only passes the ids on and reports what happened.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, load_description
from agent_repl.tools._common import ToolArgs


class SnipArgs(ToolArgs):
    start_id: str = Field(
        description='The id of the first message to remove, exactly as in its [id:...] tag (six characters, e.g. "k3x9a2")'
    )
    end_id: str | None = Field(
        default=None,
        description=(
            "The id of the last message to remove, for an inclusive range from start_id; "
            "leave it out to remove only the message start_id names"
        ),
    )
    reason: str | None = Field(
        default=None,
        description="A few words on why these messages are no longer needed (kept in the transcript)",
    )


class Snip(Tool[SnipArgs]):
    name = "Snip"
    args_model = SnipArgs
    # It changes only what the model will see, never a file, so it needs no permission.
    is_read_only: ClassVar[bool] = True
    description = load_description(__file__, "snip")

    async def run(self, args: SnipArgs, ctx: ToolContext) -> ToolOutput:
        snip = ctx.ports.snip
        if snip is None:
            return ToolOutput.error(
                "Snip is not available in this session: nothing was removed. Carry on without it.",
                summary="Snip is not available in this session",
            )
        outcome = await snip(args.start_id, args.end_id, args.reason)
        if outcome.is_error:
            return ToolOutput.error(outcome.model_text, summary=outcome.user_text)
        return ToolOutput(
            content=outcome.model_text, structured=outcome.structured, summary=outcome.user_text
        )
