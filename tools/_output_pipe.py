"""The pipe a Bash command writes its output through; the agent copies it into the output file.

Only the agent writes into the session's directory. When the call returns, the processes still
holding the pipe (a background `yes &`, and `setsid yes &` too, which leaves the process group)
are stopped and the read end is closed, so a process a command started can never write into the
session's directory after the call, nor after the agent exits (a write to a pipe nobody reads
fails).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from pathlib import Path

_CHUNK_BYTES = 1 << 20
_CHUNKS_PER_WAKEUP = 8


class OutputPipe:
    """Copies what the command writes into `out_fd` (the output file, owned by this pipe from now on)."""

    def __init__(self, out_fd: int, *, limit_bytes: int | None = None) -> None:
        self.read_fd, self.write_fd = os.pipe()
        with contextlib.suppress(OSError):  # fewer wake-ups for a flood of output; the default works too
            fcntl.fcntl(self.read_fd, fcntl.F_SETPIPE_SZ, _CHUNK_BYTES)
        os.set_blocking(self.read_fd, False)
        self.out_fd = out_fd
        self.link = f"pipe:[{os.fstat(self.read_fd).st_ino}]"
        # Why the output could not be kept (a full disk); the command still runs to its end.
        self.error: OSError | None = None
        # Past this many bytes the output is read and dropped (a background command's file stays bounded).
        self.limit_bytes = limit_bytes
        self.kept_bytes = 0
        self.dropped_bytes = 0
        self._eof = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        """Close the write end (the child has its copy) and copy as data arrives."""
        os.close(self.write_fd)
        self.write_fd = -1
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self.read_fd, self._on_readable)

    def _on_readable(self) -> None:
        # A few chunks at a time, so a flood of output does not starve the event loop.
        for _ in range(_CHUNKS_PER_WAKEUP):
            try:
                data = os.read(self.read_fd, _CHUNK_BYTES)
            except BlockingIOError:
                return
            if not data:
                self._stop_reading()  # end of file: every writer is gone
                return
            self._keep(data)

    def _keep(self, data: bytes) -> None:
        if self.error is not None:
            return  # keep reading (a command blocked on a full pipe would hang), keep nothing
        view = memoryview(data)
        if self.limit_bytes is not None:
            room = max(0, self.limit_bytes - self.kept_bytes)
            self.dropped_bytes += max(0, len(view) - room)
            view = view[:room]
        self.kept_bytes += len(view)
        try:
            while view:
                view = view[os.write(self.out_fd, view) :]
        except OSError as exc:
            self.error = exc

    def _stop_reading(self) -> None:
        if self._loop is not None:
            self._loop.remove_reader(self.read_fd)
            self._loop = None
        self._eof.set()

    async def wait_for_end(self, timeout: float) -> bool:  # noqa: ASYNC109
        """Wait until every writer has closed the pipe; False when some still hold it after `timeout`."""
        try:
            await asyncio.wait_for(self._eof.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def holders(self) -> list[int]:
        """The other processes that still have the pipe open (Linux only: /proc)."""
        me = os.getpid()
        found = []
        for entry in _proc_entries():
            if int(entry.name) == me:
                continue
            try:
                if any(os.readlink(fd) == self.link for fd in (entry / "fd").iterdir()):
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    def close(self) -> None:
        """Stop copying; a process still writing gets EPIPE (or SIGPIPE) from now on."""
        self._stop_reading()
        for fd in (self.read_fd, self.write_fd, self.out_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.read_fd = self.write_fd = self.out_fd = -1


def _proc_entries() -> list[Path]:
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    return [entry for entry in proc.iterdir() if entry.name.isdigit()]
