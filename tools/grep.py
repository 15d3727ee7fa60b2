"""Grep: ripgrep over the working tree, .gitignore respected, bounded in time and output size."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from agent_repl.core.permissions.read_access import search_refusal
from agent_repl.core.permissions.rules import PermissionRequest
from agent_repl.core.tooling.display import ToolDisplay
from agent_repl.core.tooling.persisted_output import format_size
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, load_description
from agent_repl.tools._common import FoundDisplay, ToolArgs, current_cwd, display_path, resolve_path

TIME_LIMIT_SECONDS = 20.0
# ripgrep's output is read up to this many bytes, then ripgrep is stopped (a result this large
# is persisted by the loop anyway; the cap keeps memory bounded).
OUTPUT_CAP_BYTES = 1_000_000
MAX_COLUMNS = 500
_STDERR_CAP_BYTES = 4_000

OutputMode = Literal["content", "files_with_matches", "count"]


class GrepArgs(ToolArgs):
    pattern: str = Field(description="The regular expression to search for in file contents (ripgrep syntax)")
    path: str | None = Field(
        default=None, description="File or directory to search in. Defaults to the current working directory"
    )
    glob: str | None = Field(
        default=None,
        description='Glob pattern that files must match, e.g. "*.js" or "*.{ts,tsx}" (rg --glob)',
    )
    type: str | None = Field(
        default=None,
        description="File type to search, e.g. py, js, rust, go, java (rg --type); faster than glob",
    )
    output_mode: OutputMode | None = Field(
        default=None,
        description=(
            'Output mode: "content" shows matching lines (honours -A/-B/-C, -n and head_limit), '
            '"files_with_matches" shows file paths (honours head_limit), "count" shows match counts per file. '
            'Defaults to "files_with_matches"'
        ),
    )
    case_insensitive: bool | None = Field(
        default=None, alias="-i", description="Case-insensitive search (rg -i)"
    )
    line_numbers: bool | None = Field(
        default=None,
        alias="-n",
        description='Show line numbers (rg -n); "content" mode only; defaults to true',
    )
    after: int | None = Field(
        default=None,
        ge=0,
        alias="-A",
        description='Lines to show after each match (rg -A); "content" mode only',
    )
    before: int | None = Field(
        default=None,
        ge=0,
        alias="-B",
        description='Lines to show before each match (rg -B); "content" mode only',
    )
    context: int | None = Field(
        default=None,
        ge=0,
        alias="-C",
        description='Lines to show before and after each match (rg -C); "content" mode only',
    )
    head_limit: int | None = Field(
        default=None,
        ge=0,
        description="Keep only the first N lines or entries of the output, like | head -N (0 means no limit)",
    )
    multiline: bool | None = Field(
        default=None,
        description="Let patterns span lines and . match newlines (rg -U --multiline-dotall); defaults to false",
    )


def find_rg() -> str | None:
    """The `rg` of this Python environment (the ripgrep wheel), else the one on PATH."""
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


def build_rg_args(args: GrepArgs, target: str | None) -> list[str]:
    """ripgrep's arguments (after the program name) for one search of `target` (None: the cwd)."""
    mode = args.output_mode or "files_with_matches"
    argv = ["--no-config", "--hidden", "--no-require-git", "--glob", "!.git", "--color", "never"]
    argv += ["--max-columns", str(MAX_COLUMNS), "--max-columns-preview"]
    if args.case_insensitive:
        argv.append("--ignore-case")
    if args.multiline:
        argv += ["--multiline", "--multiline-dotall"]
    if args.type:
        argv += ["--type", args.type]
    for pattern in (args.glob or "").split():
        argv += ["--glob", pattern]
    if mode == "files_with_matches":
        argv.append("--files-with-matches")
    elif mode == "count":
        argv += ["--count", "--with-filename"]
    else:
        argv += ["--with-filename", "--no-heading", "--sort", "path"]
        if args.line_numbers is not False:
            argv.append("--line-number")
        if args.context is not None:
            argv += ["--context", str(args.context)]
        if args.after is not None:
            argv += ["--after-context", str(args.after)]
        if args.before is not None:
            argv += ["--before-context", str(args.before)]
    argv += ["--regexp", args.pattern, "--"]
    argv.append(target if target is not None else ".")
    return argv


@dataclass
class _RgRun:
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytes = b""
    returncode: int | None = None
    stopped: str = ""  # "", "output cap", "head limit", "time limit" or "interrupted"


class Grep(Tool[GrepArgs]):
    name = "Grep"
    display: ClassVar[ToolDisplay] = FoundDisplay()
    args_model = GrepArgs
    max_result_size_chars: ClassVar[int | None] = 20_000
    is_read_only: ClassVar[bool] = True
    microcompact_clearable: ClassVar[bool] = True
    description = load_description(__file__, "grep")

    def __init__(self, *, time_limit_seconds: float = TIME_LIMIT_SECONDS) -> None:
        self.time_limit_seconds = time_limit_seconds

    def permission_request(self, args: GrepArgs, ctx: ToolContext) -> PermissionRequest | None:
        target = resolve_path(ctx, args.path)
        return PermissionRequest(self.name, str(target), reads=True, directory=target.is_dir())

    async def run(self, args: GrepArgs, ctx: ToolContext) -> ToolOutput:
        rg = find_rg()
        if rg is None:
            return ToolOutput.error("ripgrep (rg) is not installed; install the `ripgrep` Python package.")
        cwd = current_cwd(ctx)
        target = resolve_path(ctx, args.path)
        if not target.exists():
            return ToolOutput.error(f"Path does not exist: {target}\nCurrent working directory: {cwd}")
        refused = search_refusal(target)
        if refused:
            return ToolOutput.error(refused)
        shown = display_path(target, cwd)
        mode = args.output_mode or "files_with_matches"
        # A cwd-relative target makes ripgrep print cwd-relative paths; "." is stripped below.
        line_cap = args.head_limit if mode == "content" and args.head_limit else 0
        run = await self._run_rg([rg, *build_rg_args(args, shown)], cwd, ctx, line_cap)
        if run.returncode == 2 and not run.stdout:
            message = run.stderr.decode("utf-8", errors="replace").strip() or "ripgrep failed"
            return ToolOutput.error(f"Grep failed: {message}")
        if run.stopped in ("time limit", "interrupted") and not run.stdout:
            why = (
                "was interrupted"
                if run.stopped == "interrupted"
                else f"took over {self.time_limit_seconds:g}s"
            )
            return ToolOutput.error(
                f"The search {why} and was stopped with no results yet. Narrow it with path, glob or type.",
                summary=f"Grep {run.stopped}",
            )
        data = bytes(run.stdout)
        if run.stopped and not data.endswith(b"\n"):
            data = data[: data.rfind(b"\n") + 1]  # drop a half-written last line
        lines = [line.removeprefix("./") for line in data.decode("utf-8", errors="replace").splitlines()]
        return self._format(args, mode, lines, cwd, run.stopped)

    async def _run_rg(self, argv: list[str], cwd: Path, ctx: ToolContext, line_cap: int) -> _RgRun:
        run = _RgRun()
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            run.returncode, run.stderr = 2, str(exc).encode()
            return run
        stdout, stderr = proc.stdout, proc.stderr
        assert stdout is not None and stderr is not None

        enough = asyncio.Event()

        async def read_stdout() -> None:
            # Keeps reading after the cap, discarding: a pipe left full never reaches EOF, and
            # asyncio's Process.wait() waits for the pipes to close.
            newlines = 0
            while chunk := await stdout.read(1 << 16):
                if enough.is_set():
                    continue
                run.stdout += chunk
                newlines += chunk.count(b"\n")
                if len(run.stdout) >= OUTPUT_CAP_BYTES:
                    del run.stdout[OUTPUT_CAP_BYTES:]
                    run.stopped = "output cap"
                    enough.set()
                elif line_cap and newlines >= line_cap:
                    run.stopped = "head limit"
                    enough.set()

        async def read_stderr() -> None:
            while chunk := await stderr.read(1 << 16):
                if len(run.stderr) < _STDERR_CAP_BYTES:
                    run.stderr += chunk

        stdout_task = asyncio.ensure_future(read_stdout())
        stderr_task = asyncio.ensure_future(read_stderr())
        enough_task = asyncio.ensure_future(enough.wait())
        cancel_task = asyncio.ensure_future(ctx.cancelled.wait())
        try:
            done, _ = await asyncio.wait(
                {stdout_task, enough_task, cancel_task},
                timeout=self.time_limit_seconds,
                return_when=asyncio.FIRST_COMPLETED,
            )
            if stdout_task not in done and not run.stopped:
                run.stopped = "interrupted" if cancel_task in done else "time limit"
            if run.stopped:
                _kill(proc)
            # Once rg is gone the readers drain both pipes to EOF, and then wait() can return.
            await asyncio.wait({stdout_task, stderr_task}, timeout=5.0)
            run.returncode = await proc.wait()
        finally:
            for task in (stdout_task, stderr_task, enough_task, cancel_task):
                task.cancel()
            if proc.returncode is None:
                _kill(proc)
        return run

    def _format(
        self, args: GrepArgs, mode: OutputMode, lines: list[str], cwd: Path, stopped: str
    ) -> ToolOutput:
        limit = args.head_limit or None
        applied = limit if limit is not None and len(lines) > limit else None
        if applied is None and stopped == "head limit":
            applied = limit
        structured: dict[str, Any] = {
            "mode": mode,
            "filenames": [],
            "numFiles": 0,
            "content": "",
            "numLines": 0,
        }
        notes: list[str] = []
        if mode == "files_with_matches":
            files = sorted(lines, key=lambda p: (-_mtime(cwd / p), p))[:limit]
            structured.update(filenames=[str(cwd / f) for f in files], numFiles=len(files))
            body = f"Found {_count(len(files), 'file')}\n" + "\n".join(files) if files else ""
            empty, summary = "No files found", f"Found {_count(len(files), 'file')}"
        elif mode == "count":
            entries = sorted(lines)[:limit]
            total = sum(int(e.rpartition(":")[2]) for e in entries if e.rpartition(":")[2].isdigit())
            structured.update(
                filenames=[str(cwd / e.rpartition(":")[0]) for e in entries],
                numFiles=len(entries),
                numMatches=total,
                content="\n".join(entries),
                numLines=len(entries),
            )
            summary = f"{_count(total, 'matching line')} across {_count(len(entries), 'file')}"
            body = "\n".join(entries) + f"\n\nFound {summary}." if entries else ""
            empty = "No matches found"
        else:
            kept = lines[:limit]
            structured.update(content="\n".join(kept), numLines=len(kept))
            body, empty, summary = "\n".join(kept), "No matches found", f"Found {_count(len(kept), 'line')}"
        if applied is not None:
            structured["appliedLimit"] = applied
            notes.append(f"(Output limited to the first {applied} entries by head_limit.)")
        if stopped in ("output cap", "time limit", "interrupted"):
            structured["stoppedEarly"] = stopped
            reason = {
                "output cap": f"its output passed {format_size(OUTPUT_CAP_BYTES)}",
                "time limit": f"it ran over {self.time_limit_seconds:g}s",
                "interrupted": "it was interrupted",
            }[stopped]
            notes.append(
                f"(ripgrep was stopped because {reason}; results are incomplete. Narrow the search.)"
            )
            summary += f" (stopped: {stopped})"
        text = "\n".join([body or empty, *notes])
        return ToolOutput(content=text, structured=structured, summary=summary if body else empty)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _kill(proc: asyncio.subprocess.Process) -> None:
    try:
        proc.kill()
    except ProcessLookupError:  # it finished on its own meanwhile
        pass


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
