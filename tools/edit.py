"""Edit: replace an exact string in a file the model has read, keeping its encoding and line endings."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from agent_repl.core.permissions.protected_paths import protected_reason
from agent_repl.core.tooling.diffs import FileChange, patch_stats, structured_patch
from agent_repl.core.tooling.display import FileChangeDisplay, ToolDisplay
from agent_repl.core.tooling.file_state import Freshness, ReadLedger
from agent_repl.core.tooling.numbering import strip_line_numbers
from agent_repl.core.tooling.tool import Args, Tool, ToolContext, ToolOutput, load_description
from agent_repl.tools._common import ToolArgs, current_cwd, display_path
from agent_repl.tools._files import FileError, TextFile, load_text, numbered_snippet, write_atomic


class EditArgs(ToolArgs):
    file_path: str = Field(description="The absolute path of the file to change")
    old_string: str = Field(description="The exact text to replace")
    new_string: str = Field(description="The text to put in its place (must differ from old_string)")
    replace_all: bool | None = Field(default=None, description="Replace every occurrence of old_string (default false)")


def not_read_error(path: Path) -> str:
    return f"{path} has not been read in this session. Read it with the Read tool first, then edit it."


def stale_error(path: Path) -> str:
    return (
        f"{path} has changed on disk since you last read it (the user, a formatter or a command changed it). "
        "Read it again, then make your edit against its current content."
    )


def not_found_error(path: Path) -> str:
    return (
        f"old_string was not found in {path}. It must match the file exactly, including whitespace and "
        "indentation, and without the line-number prefix Read adds. Read the file again if you are unsure."
    )


def ambiguous_error(path: Path, count: int) -> str:
    return (
        f"old_string occurs {count} times in {path}, but replace_all is false. Include more of the "
        "surrounding lines so it matches exactly one place, or set replace_all to true to change all "
        f"{count}."
    )


def relative_path_error(given: str, cwd: Path) -> str:
    guess = Path(os.path.normpath(cwd / given))
    return f"file_path must be an absolute path, got {given!r}. Did you mean {guess}?"


def freshness_error(ledger: ReadLedger, text: TextFile) -> str | None:
    """Why the model may not change this file now, or None."""
    state = ledger.freshness(text.path, text.data)
    if state is Freshness.UNREAD:
        return not_read_error(text.path)
    if state is not Freshness.FRESH:
        return stale_error(text.path)
    return None


def inside(path: Path, root: Path) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class EditPlan:
    path: Path
    original: TextFile | None
    new_text: str
    occurrences: int
    change: FileChange


def crlf_strings(old: str, new: str, text: str) -> tuple[str, str]:
    """The model writes "\n"; in a CRLF file its strings mean "\r\n" (unless they say so already)."""
    if "\r\n" not in old and old not in text:
        old = old.replace("\n", "\r\n")
    if "\r\n" not in new:
        new = new.replace("\n", "\r\n")
    return old, new


def without_read_numbers(old: str, new: str, text: str) -> tuple[str, str] | None:
    """The model copied Read's line numbers into old_string: the strings without them, when the
    unnumbered old_string is in the file (new_string loses its numbers only if every line has one)."""
    bare_old = strip_line_numbers(old)
    if not bare_old or bare_old not in text:
        return None
    bare_new = strip_line_numbers(new)
    return bare_old, new if bare_new is None else bare_new


def plan_edit(args: EditArgs, ctx: ToolContext) -> EditPlan | ToolOutput:
    cwd = current_cwd(ctx)
    if not os.path.isabs(args.file_path):
        return ToolOutput.error(relative_path_error(args.file_path, cwd))
    path = Path(os.path.normpath(args.file_path))
    if args.old_string == args.new_string:
        return ToolOutput.error("old_string and new_string are the same; there is nothing to change.")
    if not path.exists() and not path.is_symlink():
        if args.old_string:
            return ToolOutput.error(
                f"File does not exist: {path}. To create a file, use Write (or Edit with an empty old_string).",
                summary=f"File not found: {path}",
            )
        return plan_change(path, None, args.new_string, 1, ctx)
    try:
        original = load_text(path)
    except FileError as exc:
        return ToolOutput.error(str(exc))
    refused = freshness_error(ctx.files, original)
    if refused:
        return ToolOutput.error(refused)
    text = original.text
    if not args.old_string:
        if text.strip():
            return ToolOutput.error(
                f"old_string is empty, but {path} is not: an empty old_string only fills an empty file. "
                "Give the exact text to replace, or use Write to replace the whole file."
            )
        return plan_change(path, original, args.new_string, 1, ctx)
    old, new = args.old_string, args.new_string
    if original.newline == "\r\n":
        old, new = crlf_strings(old, new, text)
    count = text.count(old)
    if count == 0 and (unnumbered := without_read_numbers(old, new, text)) is not None:
        old, new = unnumbered
        count = text.count(old)
    if count == 0:
        return ToolOutput.error(not_found_error(path), summary="old_string not found")
    if count > 1 and not args.replace_all:
        return ToolOutput.error(ambiguous_error(path, count), summary=f"old_string matches {count} places")
    new_text = text.replace(old, new) if args.replace_all else text.replace(old, new, 1)
    return plan_change(path, original, new_text, count, ctx)


def plan_change(path: Path, original: TextFile | None, new_text: str, occurrences: int, ctx: ToolContext) -> EditPlan:
    old_text = original.text if original is not None else None
    change = FileChange(
        path=str(path),
        display_path=display_path(path, ctx.cwd),
        old_text=old_text,
        new_text=new_text,
        hunks=structured_patch(old_text or "", new_text),
        outside_project=not inside(path, ctx.cwd),
        protected=protected_reason(path),
    )
    return EditPlan(path, original, new_text, occurrences, change)


async def write_plan(plan: EditPlan, ctx: ToolContext) -> ToolOutput | None:
    """Checkpoint and write the planned text; an error result when the file moved meanwhile."""
    if plan.original is not None:
        # The file may have changed while the user looked at the diff.
        try:
            current = plan.path.read_bytes()
        except OSError:
            current = None
        if current != plan.original.data:
            return ToolOutput.error(stale_error(plan.path))
        data = plan.original.encode(plan.new_text)
        mode: int | None = plan.original.mode
    else:
        if plan.path.exists():
            return ToolOutput.error(f"{plan.path} was created meanwhile; Read it, then edit it.")
        data = plan.new_text.encode("utf-8")
        mode = None
    if ctx.before_change is not None:
        await ctx.before_change(plan.path)
    try:
        await asyncio.to_thread(write_atomic, plan.path, data, mode)
    except OSError as exc:
        return ToolOutput.error(f"Cannot write {plan.path}: {exc.strerror or exc}")
    ctx.files.record(plan.path, data)
    return None


class FileChangeTool(Tool[Args]):
    """Edit and Write: plan the change (the checks and the new text), show it, then write it."""

    microcompact_clearable: ClassVar[bool] = True
    edits_files: ClassVar[bool] = True

    def plan(self, args: Args, ctx: ToolContext) -> EditPlan | ToolOutput:
        raise NotImplementedError

    def report(self, args: Args, plan: EditPlan) -> ToolOutput:
        """The result once the planned text is written."""
        raise NotImplementedError

    def permission_key(self, args: Args) -> str:
        return str(getattr(args, "file_path", ""))

    async def prepare(self, args: Args, ctx: ToolContext) -> ToolOutput | Any:
        plan = await asyncio.to_thread(self.plan, args, ctx)
        return plan if isinstance(plan, ToolOutput) else plan.change

    async def run(self, args: Args, ctx: ToolContext) -> ToolOutput:
        plan = await asyncio.to_thread(self.plan, args, ctx)
        if isinstance(plan, ToolOutput):
            return plan
        failed = await write_plan(plan, ctx)
        return failed if failed is not None else self.report(args, plan)


class EditDisplay(FileChangeDisplay):
    def asked_hunks(self, tool_input: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        old = tool_input.get("old_string")
        return structured_patch(old, str(tool_input.get("new_string", ""))) if isinstance(old, str) else None


class Edit(FileChangeTool[EditArgs]):
    name = "Edit"
    display: ClassVar[ToolDisplay] = EditDisplay()
    args_model = EditArgs
    description = load_description(__file__, "edit")

    def plan(self, args: EditArgs, ctx: ToolContext) -> EditPlan | ToolOutput:
        return plan_edit(args, ctx)

    def report(self, args: EditArgs, plan: EditPlan) -> ToolOutput:
        hunks = plan.change.hunks
        snippet = numbered_snippet(plan.new_text, hunks)
        many = f" ({plan.occurrences} occurrences replaced)" if args.replace_all and plan.occurrences > 1 else ""
        verb = "created" if plan.original is None else "updated"
        text = f"The file {plan.path} has been {verb}{many}."
        if snippet:
            text += f" The changed part now reads (cat -n):\n{snippet}"
        structured = {
            "filePath": str(plan.path),
            "oldString": args.old_string,
            "newString": args.new_string,
            "originalFile": plan.original.text if plan.original is not None else "",
            "structuredPatch": hunks,
            "userModified": False,
            "replaceAll": bool(args.replace_all),
        }
        return ToolOutput(
            content=text,
            structured=structured,
            summary=f"{verb.capitalize()} {plan.path.name}: {patch_stats(hunks).text()}",
        )
