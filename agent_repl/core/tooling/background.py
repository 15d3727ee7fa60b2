"""The session's background shells: Bash commands that run on while the conversation goes on.

Bash starts one with `run_in_background` (or the user moves a running one here with Ctrl+B); the
shell keeps its process group and its output file, which the agent fills through the same pipe
as a foreground command, up to `MAX_OUTPUT_BYTES`. BashOutput reads what is new since the last
read, KillShell stops one, and the session kills whatever still runs when it ends. A shell that
ends on its own is announced to the model once, on its next request (`take_notifications`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

ShellStatus = Literal["running", "completed", "failed", "killed"]

# The most bytes of output a background shell keeps on disk; what comes after is counted, not kept.
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
# The most bytes one BashOutput read loads; an older part of a larger backlog is skipped and named.
MAX_READ_BYTES = 256 * 1024


class ShellProcess(Protocol):
    """A started shell that leads its own process group (asyncio's Process, the sandbox's)."""

    pid: int

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...


class ShellOutput(Protocol):
    """Where the shell's output is copied to its file (agent_repl.tools._output_pipe.OutputPipe)."""

    async def wait_for_end(self, timeout: float) -> bool: ...  # noqa: ASYNC109

    def close(self) -> None: ...


@dataclass
class BackgroundShell:
    shell_id: str
    command: str
    description: str
    output_path: Path
    process: ShellProcess
    pipe: ShellOutput
    status: ShellStatus = "running"
    exit_code: int | None = None
    # How far BashOutput has read the output file.
    read_offset: int = 0
    # Told to the model already (its end, or the model killed it itself).
    announced: bool = False
    watcher: asyncio.Task[None] | None = field(default=None, repr=False)
    # Side files of the command removed once it has ended.
    leftovers: tuple[Path, ...] = ()

    def line(self) -> str:
        """One line for /bashes: id, status (with the exit code), command."""
        status: str = self.status
        if self.exit_code is not None and status != "running":
            status = f"{status}, exit code {self.exit_code}"
        return f"{self.shell_id}  [{status}]  {self.command}"


@dataclass(frozen=True)
class ShellRead:
    """What BashOutput gets: the new output (filtered), where the shell stands, what was skipped."""

    shell: BackgroundShell
    text: str
    skipped_bytes: int = 0
    filtered_out: int = 0


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class BackgroundShells:
    """One session's background shells, by id (`bash_1`, `bash_2`, ...)."""

    def __init__(self, *, kill_grace_seconds: float = 2.0) -> None:
        self.kill_grace_seconds = kill_grace_seconds
        self.shells: dict[str, BackgroundShell] = {}
        self._next = 1
        # Set by Ctrl+B: the Bash command running in the foreground moves here.
        self.move_requested = asyncio.Event()
        self.foreground_running = 0

    def request_move(self) -> bool:
        """Ctrl+B: ask the running foreground Bash command to go to the background; False when
        none is running."""
        if self.foreground_running <= 0:
            return False
        self.move_requested.set()
        return True

    def adopt(
        self,
        command: str,
        description: str,
        process: ShellProcess,
        pipe: ShellOutput,
        output_path: Path,
        leftovers: tuple[Path, ...] = (),
    ) -> BackgroundShell:
        """Take over a started shell: from now on it runs until it ends, is killed or the session ends."""
        shell_id = f"bash_{self._next}"
        self._next += 1
        shell = BackgroundShell(shell_id, command, description, output_path, process, pipe, leftovers=leftovers)
        self.shells[shell_id] = shell
        shell.watcher = asyncio.ensure_future(self._watch(shell))
        return shell

    async def _watch(self, shell: BackgroundShell) -> None:
        code = await shell.process.wait()
        # Children still holding the output (`cmd &`) may write a little more; then it is closed.
        await shell.pipe.wait_for_end(0.5)
        shell.pipe.close()
        for path in shell.leftovers:
            path.unlink(missing_ok=True)
        if shell.status == "running":
            shell.exit_code = code
            shell.status = "completed" if code == 0 else "failed"

    def get(self, shell_id: str) -> BackgroundShell | None:
        return self.shells.get(shell_id.strip())

    def known_ids(self) -> str:
        return ", ".join(self.shells) or "none"

    def read(self, shell: BackgroundShell, pattern: re.Pattern[str] | None = None) -> ShellRead:
        """The output written since the last read (at most `MAX_READ_BYTES`, its newest part), with
        only the lines matching `pattern` when one is given; the read offset moves past all of it."""
        try:
            size = shell.output_path.stat().st_size
        except OSError:
            size = shell.read_offset
        start = max(shell.read_offset, size - MAX_READ_BYTES)
        skipped = start - shell.read_offset
        data = b""
        if size > start:
            with shell.output_path.open("rb") as f:
                f.seek(start)
                data = f.read(size - start)
        # A partial last line waits for the next read, unless the shell is done writing.
        if shell.status == "running" and data and not data.endswith(b"\n") and b"\n" in data:
            data = data[: data.rindex(b"\n") + 1]
        shell.read_offset = start + len(data)
        text = data.decode("utf-8", errors="replace")
        filtered_out = 0
        if pattern is not None:
            lines = text.splitlines()
            kept = [line for line in lines if pattern.search(line)]
            filtered_out = len(lines) - len(kept)
            text = "\n".join(kept)
        if shell.status != "running":
            shell.announced = True  # the model has seen how it ended
        return ShellRead(shell, text.rstrip("\n"), skipped, filtered_out)

    async def kill(self, shell: BackgroundShell) -> None:
        """SIGTERM the shell's process group, SIGKILL what is left after a short grace."""
        if shell.status != "running":
            return
        shell.status = "killed"
        shell.announced = True  # the one who killed it knows
        pgid = shell.process.pid
        _signal_group(pgid, signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.shield(shell.process.wait()), self.kill_grace_seconds)
        except TimeoutError:
            pass
        _signal_group(pgid, signal.SIGKILL)  # whatever of the group outlived its leader
        shell.exit_code = await shell.process.wait()
        if shell.watcher is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await shell.watcher

    def take_notifications(self) -> list[str]:
        """One `<task-notification>` per shell that ended (on its own, or killed by the user) and
        was not yet announced; one the model killed or read to its end is not."""
        notes = []
        for shell in self.shells.values():
            if shell.status != "running" and not shell.announced:
                shell.announced = True
                summary = f'Background command "{shell.description or shell.command}" {shell.status}'
                if shell.status == "killed":
                    summary = f'Background command "{shell.description or shell.command}" was killed by the user'
                else:
                    summary += f" (exit code {shell.exit_code})"
                notes.append(
                    "<task-notification>\n"
                    f"<task-id>{shell.shell_id}</task-id>\n"
                    f"<status>{shell.status}</status>\n"
                    f"<summary>{summary}</summary>\n"
                    f"Read its output with BashOutput (bash_id {shell.shell_id}).\n"
                    "</task-notification>"
                )
        return notes

    async def close(self) -> None:
        """The session ends: every shell still running is killed."""
        running = [shell for shell in self.shells.values() if shell.status == "running"]
        await asyncio.gather(*(self.kill(shell) for shell in running), return_exceptions=True)
