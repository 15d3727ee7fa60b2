"""BashOutput: the new output of a background shell since the last read, and where it stands
(Claude Code's tool name and inputs)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field

from agent_repl.core.tooling.background import ShellRead
from agent_repl.core.tooling.display import HEADLINE_WIDTH, ToolDisplay, one_line, plural, structured_dict
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, load_description
from agent_repl.tools._common import ToolArgs, background_shell


class BashOutputArgs(ToolArgs):
    bash_id: str = Field(min_length=1, description="The ID of the background shell to read output from")
    filter: str | None = Field(
        default=None,
        description="Optional regular expression: only the output lines that match it are shown; "
        "the others are still consumed",
    )


def _report(read: ShellRead) -> str:
    shell = read.shell
    parts = [f"<status>{shell.status}</status>"]
    if shell.exit_code is not None and shell.status != "running":
        parts.append(f"<exit_code>{shell.exit_code}</exit_code>")
    notes = []
    if read.skipped_bytes:
        notes.append(
            f"{read.skipped_bytes} bytes of older output were skipped; the whole output is in {shell.output_path}"
        )
    if read.filtered_out:
        notes.append(f"{read.filtered_out} lines did not match the filter")
    parts.append(f"<output>\n{read.text}\n</output>" if read.text else "<output>(no new output)</output>")
    if notes:
        parts.append(f"<note>{'; '.join(notes)}</note>")
    return "\n".join(parts)


class BashOutputDisplay(ToolDisplay):
    """`BashOutput(bash_1)`, and where the shell stands with how many new lines it wrote."""

    def headline(self, name: str, tool_input: Mapping[str, Any], width: int = HEADLINE_WIDTH) -> str:
        return one_line(f"{name}({tool_input.get('bash_id', '')})", width)

    def summary(self, tool_input: Mapping[str, Any], structured: Any) -> str | None:
        data = structured_dict(structured)
        if "status" not in data:
            return None
        status = str(data["status"])
        if data.get("exitCode") is not None and status != "running":
            status += f" (exit code {data['exitCode']})"
        return f"{status}: {plural(len(str(data.get('stdout') or '').splitlines()), 'new line')}"


class BashOutput(Tool[BashOutputArgs]):
    name = "BashOutput"
    display: ClassVar[ToolDisplay] = BashOutputDisplay()
    args_model = BashOutputArgs
    max_result_size_chars: ClassVar[int | None] = 30_000
    is_read_only: ClassVar[bool] = True
    # An old read is stale once the shell has written more.
    microcompact_clearable: ClassVar[bool] = True
    description = load_description(__file__, "bash_output")

    async def run(self, args: BashOutputArgs, ctx: ToolContext) -> ToolOutput:
        found = background_shell(ctx, args.bash_id)
        if isinstance(found, ToolOutput):
            return found
        shells, shell = found
        pattern = None
        if args.filter:
            try:
                pattern = re.compile(args.filter)
            except re.error as exc:
                return ToolOutput.error(f"Error: the filter is not a valid regular expression: {exc}")
        read = shells.read(shell, pattern)
        structured = {
            "shellId": shell.shell_id,
            "command": shell.command,
            "status": shell.status,
            "exitCode": shell.exit_code,
            "stdout": read.text,
            "stderr": "",
        }
        lines = len(read.text.splitlines())
        return ToolOutput(
            content=_report(read), structured=structured, summary=f"{shell.shell_id} {shell.status}: {lines} new lines"
        )
