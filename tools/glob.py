"""Glob: files matching a pattern, newest first, .gitignore respected, symlinked directories not followed."""

from __future__ import annotations

import asyncio
import heapq
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from agent_repl.core.permissions.rules import PermissionRequest
from agent_repl.core.tooling.display import ToolDisplay
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, load_description
from agent_repl.tools._common import FoundDisplay, ToolArgs, current_cwd, display_path, resolve_path
from agent_repl.tools._gitignore import IgnoreChain, extend_chain, initial_chain, is_ignored
from agent_repl.tools._globpattern import CompiledGlob, compile_glob

MAX_RESULTS = 100
TIME_LIMIT_SECONDS = 20.0


class GlobArgs(ToolArgs):
    pattern: str = Field(
        description='The glob pattern to match files against, e.g. "**/*.py" or "src/**/*.{ts,tsx}"'
    )
    path: str | None = Field(
        default=None,
        description=(
            "The directory to search in. Leave it out to search the current working directory "
            '(do not pass "null" or "undefined")'
        ),
    )


@dataclass
class _Walk:
    matches: int = 0
    stopped: str = ""  # why the walk ended early: "time limit" or "interrupted"


def _iter_matches(
    base: Path, glob: CompiledGlob, deadline: float, stop: threading.Event, walk: _Walk
) -> Iterator[tuple[float, str]]:
    """(mtime, path) of every matching regular file below `base`; directory symlinks are not followed."""
    base_str = str(base)
    prefix_len = len(base_str.rstrip("/")) + 1
    stack: list[tuple[str, IgnoreChain, int]] = [(base_str, initial_chain(base), 0)]
    while stack:
        if stop.is_set() or time.monotonic() > deadline:
            walk.stopped = "interrupted" if stop.is_set() else "time limit"
            return
        directory, chain, depth = stack.pop()
        chain = extend_chain(chain, directory)
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if entry.name == ".git":
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth + 1 < glob.max_depth and not is_ignored(chain, entry.path, True):
                        stack.append((entry.path, chain, depth + 1))
                    continue
                if not glob.regex.fullmatch(entry.path[prefix_len:]) or is_ignored(chain, entry.path, False):
                    continue
                if not entry.is_file():  # sockets, FIFOs, broken links, links to directories
                    continue
                mtime = entry.stat().st_mtime
            except OSError:
                continue
            walk.matches += 1
            yield mtime, entry.path


def _search(
    base: Path, glob: CompiledGlob, time_limit: float, stop: threading.Event
) -> tuple[list[str], _Walk]:
    walk = _Walk()
    matches = _iter_matches(base, glob, time.monotonic() + time_limit, stop, walk)
    newest = heapq.nsmallest(MAX_RESULTS, matches, key=lambda item: (-item[0], item[1]))
    return [path for _, path in newest], walk


class Glob(Tool[GlobArgs]):
    name = "Glob"
    display: ClassVar[ToolDisplay] = FoundDisplay()
    args_model = GlobArgs
    max_result_size_chars: ClassVar[int | None] = 100_000
    is_read_only: ClassVar[bool] = True
    microcompact_clearable: ClassVar[bool] = True
    description = load_description(__file__, "glob")

    def __init__(self, *, time_limit_seconds: float = TIME_LIMIT_SECONDS) -> None:
        self.time_limit_seconds = time_limit_seconds

    def permission_request(self, args: GlobArgs, ctx: ToolContext) -> PermissionRequest | None:
        root = resolve_path(ctx, args.path)
        glob = compile_glob(args.pattern)
        base = Path(os.path.normpath(root / glob.base)) if glob.base else root
        return PermissionRequest(self.name, str(base), reads=True, directory=True)

    async def run(self, args: GlobArgs, ctx: ToolContext) -> ToolOutput:
        started = time.monotonic()
        cwd = current_cwd(ctx)
        root = resolve_path(ctx, args.path)
        if not root.exists():
            return ToolOutput.error(f"Directory does not exist: {root}")
        if not root.is_dir():
            return ToolOutput.error(f"Path is not a directory: {root}. Pass a directory as path.")
        glob = compile_glob(args.pattern)
        base = Path(os.path.normpath(root / glob.base)) if glob.base else root
        if not base.is_dir():
            return self._output([], _Walk(), cwd, started)
        stop = threading.Event()
        search = asyncio.ensure_future(asyncio.to_thread(_search, base, glob, self.time_limit_seconds, stop))
        cancelled = asyncio.ensure_future(ctx.cancelled.wait())
        try:
            await asyncio.wait({search, cancelled}, return_when=asyncio.FIRST_COMPLETED)
            stop.set()
            files, walk = await search
        finally:
            stop.set()
            cancelled.cancel()
        return self._output(files, walk, cwd, started)

    def _output(self, files: list[str], walk: _Walk, cwd: Path, started: float) -> ToolOutput:
        truncated = walk.matches > len(files)
        structured = {
            "filenames": files,
            "numFiles": len(files),
            "durationMs": round((time.monotonic() - started) * 1000),
            "truncated": truncated,
        }
        notes = []
        if truncated:
            notes.append(
                f"(Showing the {len(files)} most recently modified of {walk.matches} matching files. "
                "Use a more specific path or pattern to see the rest.)"
            )
        if walk.stopped:
            structured["stoppedEarly"] = walk.stopped
            reason = (
                "was interrupted"
                if walk.stopped == "interrupted"
                else f"hit its {self.time_limit_seconds:g}s limit"
            )
            notes.append(f"(The search {reason}; more files may match.)")
        if not files:
            text = "\n".join(["No files found", *notes])
            return ToolOutput(content=text, structured=structured, summary="No files found")
        text = "\n".join([*(display_path(f, cwd) for f in files), *notes])
        summary = f"Found {walk.matches} file{'s' if walk.matches != 1 else ''}"
        if truncated or walk.stopped:
            summary += f" ({'stopped: ' + walk.stopped if walk.stopped else 'showing ' + str(len(files))})"
        return ToolOutput(content=text, structured=structured, summary=summary)
