"""Which paths the reading tools may touch: refused outright, inside the project, or asked.

Files that expose a process's memory or environment (`/proc/<pid>/environ`, `/proc/<pid>/mem`
and the like, for any process) and every file under `/proc/<pid>/` of the agent or one of its
ancestors are refused whatever the rules say. The decision is made on every path the kernel
would pass through while resolving the name (`/proc/self`, `/proc/thread-self`, symlinks and
`..` included), so a link inside the project cannot reach them either.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec


_MAX_LINKS = 40
_PROC_PID = re.compile(r"^/proc/(\d+)(?:/|$)")
# Files of any process that hold its memory, environment, command line or credentials.
_PROC_SECRET = re.compile(
    r"^/proc/(?:\d+|self|thread-self)(?:/task/\d+)?/"
    r"(?:environ|mem|auxv|pagemap|cmdline|stack|syscall|maps|smaps|smaps_rollup|map_files(?:/.*)?)$"
)
_SYSTEM_SECRET = {"/proc/kcore", "/proc/kmem", "/proc/kallsyms", "/dev/mem", "/dev/kmem", "/dev/port"}


def protected_pids() -> set[int]:
    """The agent's own pid and its ancestors' (read from /proc each time: parents change)."""
    pids: set[int] = set()
    pid = os.getpid()
    while pid > 0 and pid not in pids:
        pids.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        # The command name in parentheses may hold spaces; the parent pid is the second field after it.
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return pids


def resolution_chain(path: str | Path) -> list[str]:
    """Every absolute path visited while resolving `path`, in order, symlinks followed."""
    visited: list[str] = []
    absolute = str(path) if os.path.isabs(path) else os.path.join(os.getcwd(), path)
    pending = list(reversed(Path(absolute).parts[1:]))
    current = "/"
    links = 0
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current) or "/"
            continue
        candidate = os.path.join(current, part)
        visited.append(candidate)
        try:
            target = os.readlink(candidate)
        except OSError:
            current = candidate
            continue
        links += 1
        if links > _MAX_LINKS:
            break
        if target.startswith("/"):
            current = "/"
        pending.extend(reversed(Path(target).parts[1:] if target.startswith("/") else Path(target).parts))
    visited.append(current)
    return visited


def refusal(path: str | Path, pids: Iterable[int] | None = None) -> str | None:
    """Why no tool may read `path` (a sentence), or None."""
    protected = set(protected_pids() if pids is None else pids)
    chain = resolution_chain(path)
    if any(step in _SYSTEM_SECRET or _PROC_SECRET.match(step) for step in chain):
        return f"{path} exposes a process's memory or environment; reading it is refused"
    for step in chain:
        match = _PROC_PID.match(step)
        if match and int(match[1]) in protected:
            return f"{path} belongs to the agent's own process or one of its parents; reading it is refused"
    return None


def opened_refusal(fd: int) -> str | None:
    """`refusal` for the file an open descriptor points at: a link swapped after the check is caught."""
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return refusal(target) if target.startswith("/") else None


def search_refusal(path: str | Path) -> str | None:
    """A recursive search of `/` or of /proc would read every process's environment."""
    real = resolved(path)
    if real == Path("/") or real == Path("/proc") or Path("/proc") in real.parents:
        return f"searching {path} is refused: it would read process memory and environments under /proc"
    return refusal(path)


def resolved(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def inside(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


@dataclass(frozen=True)
class PathPattern:
    """The path part of `Read(...)`, gitignore style: `//abs`, `~/home`, `/project-root`, `./cwd` or `cwd`."""

    text: str
    base: Path
    spec: GitIgnoreSpec | None

    @classmethod
    def parse(cls, text: str, *, cwd: Path, home: Path | None = None) -> PathPattern:
        home = home or Path(os.path.expanduser("~"))
        if text.startswith("//"):
            base, rest = Path("/"), text[2:]
        elif text.startswith("~/") or text == "~":
            base, rest = home, text[2:]
        elif text.startswith("/"):
            base, rest = cwd, text[1:]
        else:
            base, rest = cwd, text.removeprefix("./")
        rest = rest.strip("/") if rest not in ("", "**") else rest
        from pathspec import GitIgnoreSpec  # only when a rule names a path

        spec = GitIgnoreSpec.from_lines([rest]) if rest else None
        return cls(text, Path(os.path.normpath(base)), spec)

    def matches(self, path: Path, *, directory: bool = False) -> bool:
        if path != self.base and self.base not in path.parents:
            return False
        if self.spec is None:
            return True
        relative = path.relative_to(self.base).as_posix() if path != self.base else ""
        if relative and self.spec.match_file(relative):
            return True
        # A folder is covered when the pattern covers what is in it (`dir/**` for a search of `dir`).
        return directory and self.spec.match_file(f"{relative}/x" if relative else "x")
