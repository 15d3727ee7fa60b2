"""Which files the model has seen in this session, and as they were then.

Edit and Write refuse to change a file the model has not read, or one that changed on disk since
it was read (by the user, a formatter, a Bash command): the model would be editing text it has
never seen. A read or a write records the file's modification time, size and, when the text is
at hand, its hash; a file whose time changed but whose bytes did not (a `touch`) is still fresh.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class Freshness(StrEnum):
    FRESH = "fresh"
    UNREAD = "unread"
    STALE = "stale"
    MISSING = "missing"


@dataclass(frozen=True)
class Seen:
    mtime_ns: int
    size: int
    sha256: str | None = None


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _key(path: Path | str) -> str:
    return os.path.realpath(path)


@dataclass
class ReadLedger:
    seen: dict[str, Seen] = field(default_factory=dict)

    def record(self, path: Path | str, data: bytes | None = None) -> None:
        """The file as it is on disk now has been read (or written) by the model."""
        try:
            st = os.stat(path)
        except OSError:
            self.seen.pop(_key(path), None)
            return
        self.seen[_key(path)] = Seen(st.st_mtime_ns, st.st_size, digest(data) if data is not None else None)

    def clear(self) -> None:
        self.seen.clear()

    def retain(self, paths: set[str]) -> None:
        """Forget every file but these (after a compaction, the model saw only these exactly)."""
        keep = {_key(p) for p in paths}
        self.seen = {k: v for k, v in self.seen.items() if k in keep}

    def freshness(self, path: Path | str, data: bytes | None = None) -> Freshness:
        """Whether the model's copy of `path` is current; `data` is the file's bytes when already read."""
        seen = self.seen.get(_key(path))
        if seen is None:
            return Freshness.UNREAD
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return Freshness.MISSING
        except OSError:
            return Freshness.STALE
        if st.st_mtime_ns == seen.mtime_ns and st.st_size == seen.size:
            return Freshness.FRESH
        if seen.sha256 is not None and st.st_size == seen.size:
            if data is None:
                try:
                    data = Path(path).read_bytes()
                except OSError:
                    return Freshness.STALE
            if digest(data) == seen.sha256:
                return Freshness.FRESH
        return Freshness.STALE
