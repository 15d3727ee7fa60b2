"""Starting a command inside the sandbox, and waiting for it from the event loop.

On Linux the commands are started from one thread confined by Landlock (a child inherits its
parent thread's domain); on macOS `sandbox-exec` is put before the command. Either way the
caller gets a process it can await and signal like asyncio's own.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any


class SandboxedProcess:
    """A started command: `pid`, `returncode` and an awaitable `wait()`, like asyncio's Process."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    async def wait(self) -> int:
        code = self._popen.poll()
        if code is not None:
            return code
        loop = asyncio.get_running_loop()
        try:
            fd = os.pidfd_open(self.pid)
        except OSError:
            return await asyncio.to_thread(self._popen.wait)  # no pidfd (old kernel): a thread waits
        exited: asyncio.Future[None] = loop.create_future()

        def readable() -> None:
            if not exited.done():
                exited.set_result(None)

        loop.add_reader(fd, readable)
        try:
            await exited
        finally:
            loop.remove_reader(fd)
            os.close(fd)
        return self._popen.wait()


class ConfinedSpawner:
    """One thread that entered the sandbox; every command it starts is confined with it."""

    def __init__(self, enter: Callable[[], None]) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox", initializer=enter)

    async def spawn(self, argv: Sequence[str], **popen: Any) -> SandboxedProcess:
        loop = asyncio.get_running_loop()
        started = await loop.run_in_executor(self._executor, partial(_start, list(argv), popen))
        return SandboxedProcess(started)

    def close(self) -> None:
        self._executor.shutdown(wait=False)


async def spawn_plain(argv: Sequence[str], **popen: Any) -> SandboxedProcess:
    """Start a command from the calling thread (macOS: `argv` begins with sandbox-exec)."""
    return SandboxedProcess(await asyncio.to_thread(_start, list(argv), popen))


def _start(argv: list[str], popen: dict[str, Any]) -> subprocess.Popen[bytes]:
    """Binary streams (no text mode): the output goes where the caller points it, undecoded."""
    return subprocess.Popen(argv, **popen)
