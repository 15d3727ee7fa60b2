"""One process writes a session at a time: an exclusive lock on `<project>/<session id>.lock`.

The lock is `flock`, so it goes with the process that holds it (a crash or SIGKILL never leaves a
stale one), and its file descriptor is never inherited by the commands the agent runs. The file
holds the holder's pid, so a second process can say who has the session.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from agent_repl.transcript.paths import FILE_MODE, SessionPaths


class SessionLock:
    def __init__(self, fd: int, path: Path) -> None:
        self._fd = fd
        self.path = path

    @classmethod
    def acquire(cls, paths: SessionPaths) -> SessionLock | None:
        """The session's lock, or None when another process holds it. OSError when it cannot be made."""
        paths.ensure_project_dir()
        path = lock_path(paths)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except OSError:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return cls(fd, path)

    def release(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # closing the only descriptor releases the flock
            self._fd = -1


def lock_path(paths: SessionPaths) -> Path:
    return paths.project_dir / f"{paths.session_id}.lock"


def holder_pid(paths: SessionPaths) -> int | None:
    """The pid written by the process that holds (or last held) the session's lock."""
    try:
        text = lock_path(paths).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None
