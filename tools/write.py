"""Write: create a file, or replace one the model has read, keeping its encoding and line endings."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from agent_repl.core.tooling.diffs import patch_stats, structured_patch
from agent_repl.core.tooling.display import FileChangeDisplay, ToolDisplay, changed_path, plural
from agent_repl.core.tooling.tool import ToolContext, ToolOutput, load_description
from agent_repl.tools._common import ToolArgs, current_cwd
from agent_repl.tools._files import FileError, load_text, numbered_snippet
from agent_repl.tools.edit import EditPlan, FileChangeTool, freshness_error, plan_change, relative_path_error


class WriteArgs(ToolArgs):
    file_path: str = Field(description="The absolute path of the file to write")
    content: str = Field(description="The whole new content of the file")


def plan_write(args: WriteArgs, ctx: ToolContext) -> EditPlan | ToolOutput:
    if not os.path.isabs(args.file_path):
        return ToolOutput.error(relative_path_error(args.file_path, current_cwd(ctx)))
    path = Path(os.path.normpath(args.file_path))
    if not path.exists() and not path.is_symlink():
        parent = next((p for p in path.parents if p.exists()), None)
        if parent is not None and not parent.is_dir():
            return ToolOutput.error(f"Cannot create {path}: {parent} is a file, not a directory.")
        return plan_change(path, None, args.content, 1, ctx)
    try:
        original = load_text(path)
    except FileError as exc:
        return ToolOutput.error(str(exc))
    refused = freshness_error(ctx.files, original)
    if refused:
        return ToolOutput.error(refused)
    content = args.content
    if original.newline == "\r\n" and "\r\n" not in content:
        content = content.replace("\n", "\r\n")
    return plan_change(path, original, content, 1, ctx)


class WriteDisplay(FileChangeDisplay):
    """A created file counts its lines; an overwrite shows its diff."""

    def hunks(self, tool_input: Mapping[str, Any], structured: Any) -> list[dict[str, Any]] | None:
        hunks = super().hunks(tool_input, structured)
        if not isinstance(structured, dict) or not isinstance(structured.get("structuredPatch"), list):
            return hunks
        content = structured.get("content")
        if hunks or not isinstance(content, str):
            return hunks
        # Claude Code stores no patch for a created file (nor, in older versions, for a rewrite).
        original = structured.get("originalFile")
        return structured_patch(original if isinstance(original, str) else "", content)

    def asked_hunks(self, tool_input: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        content = tool_input.get("content")
        return structured_patch("", content) if isinstance(content, str) else None

    def summary(self, tool_input: Mapping[str, Any], structured: Any) -> str | None:
        info = structured if isinstance(structured, dict) else {}
        if info.get("type") == "update":
            return super().summary(tool_input, structured)
        content = tool_input.get("content") if isinstance(tool_input.get("content"), str) else info.get("content", "")
        return f"Wrote {plural(len(str(content).splitlines()), 'line')} to {changed_path(tool_input, structured)}"


class Write(FileChangeTool[WriteArgs]):
    name = "Write"
    display: ClassVar[ToolDisplay] = WriteDisplay()
    args_model = WriteArgs
    description = load_description(__file__, "write")

    def plan(self, args: WriteArgs, ctx: ToolContext) -> EditPlan | ToolOutput:
        return plan_write(args, ctx)

    def report(self, args: WriteArgs, plan: EditPlan) -> ToolOutput:
        hunks = plan.change.hunks
        lines = len(plan.new_text.splitlines())
        created = plan.original is None
        if created:
            text = f"Created {plan.path} ({lines} lines)."
        else:
            text = f"The file {plan.path} has been overwritten with the new content ({lines} lines)."
            snippet = numbered_snippet(plan.new_text, hunks)
            if snippet:
                text += f" The first changed part now reads (cat -n):\n{snippet}"
        structured = {
            "type": "create" if created else "update",
            "filePath": str(plan.path),
            "content": args.content,
            "structuredPatch": hunks,
            "originalFile": plan.original.text if plan.original is not None else None,
        }
        summary = f"Created {plan.path.name} ({lines} lines)" if created else (
            f"Wrote {plan.path.name}: {patch_stats(hunks).text()}"
        )
        return ToolOutput(content=text, structured=structured, summary=summary)
