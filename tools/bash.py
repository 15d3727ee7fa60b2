"""Bash: one command in its own process group, its output copied through a pipe into a file, cwd
kept across calls."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from pydantic import Field, field_validator

from agent_repl.core.permissions.credentials import child_environment, credential_names
from agent_repl.core.permissions.rules import PermissionRequest
from agent_repl.core.sandbox import Sandbox
from agent_repl.core.sandbox.outcome import explain
from agent_repl.core.tooling.background import MAX_OUTPUT_BYTES, BackgroundShells
from agent_repl.core.tooling.display import ToolDisplay
from agent_repl.core.tooling.persisted_output import ensure_private_dir, persist_file
from agent_repl.core.tooling.redaction import SecretRedactor
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, load_description
from agent_repl.tools._common import ToolArgs, current_cwd, notify
from agent_repl.tools._output_pipe import OutputPipe

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
# Bytes of the output's end sent to the UI with each progress update.
PROGRESS_TAIL_BYTES = 4_000

# Runs the command with `eval` and writes the final directory to a side file on exit (even on `exit N`).
_WRAPPER = r"""__agent_repl_cwd_file=$1
__agent_repl_command=$2
shift 2
trap '__agent_repl_status=$?; builtin pwd -P >| "$__agent_repl_cwd_file" 2>/dev/null; exit $__agent_repl_status' EXIT
eval "$__agent_repl_command"
"""

Outcome = Literal["exited", "timeout", "cancelled", "backgrounded"]


class RunningCommand(Protocol):
    """The started shell: asyncio's Process, or the sandbox's process that behaves like one."""

    pid: int

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...


class BashArgs(ToolArgs):
    command: str = Field(description="The command to execute")
    timeout: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TIMEOUT_MS,
        description=f"Optional timeout in milliseconds (max {MAX_TIMEOUT_MS}); the default is {DEFAULT_TIMEOUT_MS}",
    )
    description: str | None = Field(
        default=None,
        description="A clear, concise description of what this command does, in 5-10 words",
    )
    dangerouslyDisableSandbox: bool | None = Field(  # noqa: N815 - Claude Code's name for it
        default=None,
        description="Run outside the OS sandbox (default false); only after the sandbox blocked the command. "
        "The user is always asked.",
    )

    run_in_background: bool | None = Field(
        default=None,
        description="Set to true to run this command in the background; read its output later with "
        "BashOutput and stop it with KillShell",
    )

    @field_validator("command")
    @classmethod
    def _no_nul(cls, command: str) -> str:
        # A C string ends at NUL: bash would never see the rest, and the OS refuses it as an argument.
        if "\0" in command:
            raise ValueError("must not contain a NUL byte (\\0); use printf '\\0' to produce one")
        return command


def _signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to a process group; False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_pid(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _group_members(pgid: int) -> list[int]:
    """The live (non-zombie) processes of a group, from /proc; zombies wait on a slow reaper."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def _group_alive(pgid: int) -> bool:
    """Whether any live process is left in the group."""
    if not Path("/proc").is_dir():
        return _signal_group(pgid, 0)
    return bool(_group_members(pgid))


def _pid_alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return fields[0] != "Z"


def _read_tail(path: Path, size: int) -> str:
    start = max(0, size - PROGRESS_TAIL_BYTES)
    with path.open("rb") as f:
        f.seek(start)
        data = f.read(PROGRESS_TAIL_BYTES)
    text = data.decode("utf-8", errors="replace")
    if start and "\n" in text:
        text = text.split("\n", 1)[1]
    return text.rstrip("\n")


def _scratch_dir(ctx: ToolContext) -> Path:
    """Where the live output file goes: the tool-results dir (so persisting it is a rename) or /tmp."""
    try:
        return ensure_private_dir(ctx.tool_results_dir)
    except OSError:
        return Path(tempfile.gettempdir())


def _with_sandbox_note(result: ToolOutput, sandbox: Sandbox | None, code: int | None, cwd: Path) -> ToolOutput:
    """A failed sandboxed command whose output shows the sandbox refusing something says so."""
    if sandbox is None or not result.is_error or not isinstance(result.content, str):
        return result
    note = explain(result.content, code, sandbox.policy, cwd=cwd)
    if note is None:
        return result
    result.content = f"{result.content}\n{note}"
    result.summary = f"{result.summary} (blocked by the sandbox)"
    return result


def _to_background(
    args: BashArgs,
    shells: BackgroundShells,
    proc: RunningCommand,
    pipe: OutputPipe,
    out_path: Path,
    cwd_path: Path,
    *,
    moved: bool,
) -> ToolOutput:
    """Hand the started command over to the session's background shells and answer at once."""
    pipe.limit_bytes = MAX_OUTPUT_BYTES
    shell = shells.adopt(args.command, args.description or "", proc, pipe, out_path, leftovers=(cwd_path,))
    how = "The user moved this command to the background" if moved else "Command running in background"
    text = (
        f"{how} with ID: {shell.shell_id}. Read its output with BashOutput and stop it with KillShell; "
        "you will be told when it finishes."
    )
    structured = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False,
                  "backgroundTaskId": shell.shell_id}
    label = args.description or args.command.strip().split("\n", 1)[0][:80]
    return ToolOutput(content=text, structured=structured, summary=f"{label}: in the background ({shell.shell_id})")


class BashDisplay(ToolDisplay):
    """An open Bash call shows its command as typed, not as JSON."""

    def input_text(self, tool_input: Mapping[str, Any], limit: int) -> str:
        command = tool_input.get("command")
        return command[:limit] if isinstance(command, str) else super().input_text(tool_input, limit)


class Bash(Tool[BashArgs]):
    name = "Bash"
    display: ClassVar[ToolDisplay] = BashDisplay()
    args_model = BashArgs
    max_result_size_chars: ClassVar[int | None] = 30_000
    is_read_only: ClassVar[bool] = False
    microcompact_clearable: ClassVar[bool] = True
    description = load_description(__file__, "bash")

    def __init__(self, *, progress_interval: float = 1.0, kill_grace_seconds: float = 2.0) -> None:
        self.progress_interval = progress_interval
        self.kill_grace_seconds = kill_grace_seconds

    def permission_request(self, args: BashArgs, ctx: ToolContext) -> PermissionRequest:
        unsandboxed = bool(args.dangerouslyDisableSandbox) and ctx.sandbox is not None and ctx.sandbox.active
        return PermissionRequest(
            self.name, args.command, args.description or "", cwd=current_cwd(ctx), unsandboxed=unsandboxed
        )

    async def run(self, args: BashArgs, ctx: ToolContext) -> ToolOutput:
        if ctx.cancelled.is_set():
            return ToolOutput.error("Command was not run: the turn was interrupted.", summary="interrupted")
        shells = ctx.ports.shells
        if args.run_in_background and shells is None:
            return ToolOutput.error("Error: background commands are not available in this session.")
        cwd = current_cwd(ctx)
        timeout_ms = args.timeout or DEFAULT_TIMEOUT_MS
        sandbox = ctx.sandbox if ctx.sandbox is not None and ctx.sandbox.active else None
        if args.dangerouslyDisableSandbox:
            sandbox = None  # the user approved this run outside it
        try:
            scratch = _scratch_dir(ctx)
            out_fd, out_name = tempfile.mkstemp(prefix=".bash-", suffix=".out", dir=scratch)
            # The shell writes its last directory here from inside the sandbox, so it must be writable there.
            cwd_dir = sandbox.policy.temp_dir if sandbox is not None else scratch
            cwd_fd, cwd_name = tempfile.mkstemp(prefix=".bash-", suffix=".cwd", dir=cwd_dir)
            os.close(cwd_fd)
        except OSError as exc:
            return ToolOutput.error(f"Could not create the output file for Bash: {exc}")
        out_path, cwd_path = Path(out_name), Path(cwd_name)
        pipe = OutputPipe(out_fd, limit_bytes=MAX_OUTPUT_BYTES if args.run_in_background else None)
        try:
            try:
                argv = ["bash", "-c", _WRAPPER, "bash", cwd_name, args.command]
                popen: dict[str, Any] = {
                    "cwd": cwd,
                    "env": child_environment(ctx.scrubbed_env | credential_names()),
                    "stdin": subprocess.DEVNULL,
                    "stdout": pipe.write_fd,
                    "stderr": subprocess.STDOUT,
                    "start_new_session": True,
                }
                proc: RunningCommand
                if sandbox is not None:
                    proc = await sandbox.spawn(argv, **popen)
                else:
                    proc = await asyncio.create_subprocess_exec(*argv, **popen)
            finally:
                pipe.start()
        except OSError as exc:
            pipe.close()
            out_path.unlink(missing_ok=True)
            cwd_path.unlink(missing_ok=True)
            return ToolOutput.error(f"Could not start bash: {exc}")
        if args.run_in_background and shells is not None:
            return _to_background(args, shells, proc, pipe, out_path, cwd_path, moved=False)
        handed_over = False
        try:
            try:
                outcome = await self._supervise(proc, timeout_ms / 1000, ctx, out_path)
                if outcome == "backgrounded" and shells is not None:
                    handed_over = True
                    return _to_background(args, shells, proc, pipe, out_path, cwd_path, moved=True)
                stopped = await self._stop_output_holders(pipe)
            finally:
                if not handed_over:
                    pipe.close()
            if pipe.error is not None:
                raise pipe.error
            self._learn_cwd(cwd_path, ctx)
            result = self._result(args, ctx, out_path, outcome, proc.returncode, timeout_ms, stopped)
            return _with_sandbox_note(result, sandbox, proc.returncode, Path(cwd))
        except OSError as exc:  # e.g. the disk is full
            return ToolOutput.error(f"Bash ran, but its output could not be collected: {exc}")
        finally:
            if not handed_over:
                cwd_path.unlink(missing_ok=True)
                out_path.unlink(missing_ok=True)

    async def _supervise(
        self, proc: RunningCommand, timeout_s: float, ctx: ToolContext, out_path: Path
    ) -> Outcome:
        """Wait for the shell, sending progress; on timeout or cancellation kill its whole group."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        wait_task = asyncio.ensure_future(proc.wait())
        cancel_task = asyncio.ensure_future(ctx.cancelled.wait())
        shells = ctx.ports.shells
        watched = {wait_task, cancel_task}
        if shells is not None:  # Ctrl+B moves this command to the background
            shells.move_requested.clear()
            shells.foreground_running += 1
            move_task = asyncio.ensure_future(shells.move_requested.wait())
            watched.add(move_task)
        last_size = 0
        outcome: Outcome = "timeout"
        try:
            while (remaining := deadline - loop.time()) > 0:
                done, _ = await asyncio.wait(
                    watched,
                    timeout=min(self.progress_interval, remaining),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if wait_task in done:
                    return "exited"
                if cancel_task in done:
                    outcome = "cancelled"
                    break
                if shells is not None and move_task in done:
                    return "backgrounded"
                try:
                    size = out_path.stat().st_size
                    tail = _read_tail(out_path, size) if size != last_size else None
                except OSError:
                    tail = None
                if tail is not None:
                    last_size = size
                    await notify(ctx, tail)
            await self._kill_group(proc)
            return outcome
        except BaseException:
            # The turn itself was cancelled (or something broke): never leave the group running.
            _signal_group(proc.pid, signal.SIGKILL)
            raise
        finally:
            cancel_task.cancel()
            if shells is not None:
                shells.foreground_running -= 1
                shells.move_requested.clear()
                move_task.cancel()
            if not wait_task.done():
                wait_task.cancel()

    async def _kill_group(self, proc: RunningCommand) -> None:
        """SIGTERM the group, then SIGKILL whatever is left after a short grace."""
        pgid = proc.pid  # start_new_session made the shell its group's leader
        loop = asyncio.get_running_loop()
        if _signal_group(pgid, signal.SIGTERM):
            grace_end = loop.time() + self.kill_grace_seconds
            while loop.time() < grace_end:
                if proc.returncode is not None and not _group_alive(pgid):
                    break
                await asyncio.sleep(0.05)
            else:
                _signal_group(pgid, signal.SIGKILL)
        await proc.wait()

    async def _stop_output_holders(self, pipe: OutputPipe) -> int:
        """Stop the processes still holding the command's output once the shell is gone: they would
        write into it with no bound (`yes &`, `setsid yes &`). Redirected ones keep running."""
        if await pipe.wait_for_end(0.05):
            return 0
        # A child forked with `cmd > log &` holds the pipe until its redirection is applied: look again.
        await asyncio.sleep(0.1)
        holders = pipe.holders()
        if not holders:
            await pipe.wait_for_end(self.kill_grace_seconds)
            return 0
        for pid in holders:
            _signal_pid(pid, signal.SIGTERM)
        if not await pipe.wait_for_end(self.kill_grace_seconds):
            for pid in holders:
                if _pid_alive(pid):
                    _signal_pid(pid, signal.SIGKILL)
            await pipe.wait_for_end(self.kill_grace_seconds)
        return len(holders)

    def _learn_cwd(self, cwd_path: Path, ctx: ToolContext) -> None:
        try:
            new_cwd = cwd_path.read_text(encoding="utf-8", errors="surrogateescape").strip()
        except OSError:
            return
        if new_cwd and Path(new_cwd).is_dir():
            ctx.state["cwd"] = new_cwd

    def _result(
        self,
        args: BashArgs,
        ctx: ToolContext,
        out_path: Path,
        outcome: Outcome,
        code: int | None,
        timeout_ms: int,
        stopped: int = 0,
    ) -> ToolOutput:
        limit = self.max_result_size_chars or 0
        # Before it is read or kept: `env` prints the credentials commands still get.
        (ctx.redactor or SecretRedactor()).file(out_path)
        size = out_path.stat().st_size
        output: str | None = None
        if size <= limit * 4:  # a UTF-8 char is at most 4 bytes, so only then can it fit
            text = out_path.read_bytes().decode("utf-8", errors="replace").rstrip("\n")
            if len(text) <= limit:
                output = text
        structured: dict[str, Any] = {
            "stdout": "",
            "stderr": "",
            "interrupted": outcome != "exited",
            "isImage": False,
        }
        if output is None:
            persisted = persist_file(
                out_path, ctx.tool_use_id or f"bash-{uuid.uuid4().hex}", ctx.tool_results_dir
            )
            output = persisted.preview
            structured["persistedOutputPath"] = str(persisted.path)
            structured["persistedOutputSize"] = persisted.size_bytes
        if stopped:
            note = (
                f"(Stopped {stopped} background process{'es' if stopped > 1 else ''} still writing to this "
                "command's output; to keep one running, redirect its output: cmd > file.log 2>&1 &)"
            )
            output = f"{output}\n{note}" if output else note
        structured["stdout"] = output
        structured["returnCode"] = code
        # stdout and stderr share one file, in the order they were written.
        structured["outputMerged"] = True
        if outcome == "timeout":
            structured["timedOut"] = True
        first_line = args.command.strip().split("\n", 1)[0][:80]
        label = args.description or first_line or "bash"

        if outcome == "timeout":
            head = f"Command timed out after {timeout_ms / 1000:g}s; its process group was killed."
            body = f"{head}\n{output}" if output else head
            return ToolOutput(
                content=body, is_error=True, structured=structured, summary=f"{label}: timed out"
            )
        if outcome == "cancelled":
            head = "Command was interrupted by the user; its process group was killed."
            body = f"{output}\n{head}" if output else head
            return ToolOutput(
                content=body, is_error=True, structured=structured, summary=f"{label}: interrupted"
            )
        if code:
            head = f"Exit code {code}" if code > 0 else f"Killed by signal {-code}"
            body = f"{head}\n{output}" if output else head
            return ToolOutput(
                content=body, is_error=True, structured=structured, summary=f"{label}: {head.lower()}"
            )
        return ToolOutput(content=output or "(no output)", structured=structured, summary=label)
