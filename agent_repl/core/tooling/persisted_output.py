"""Large tool results on disk, a preview in context (docs/architecture.md 7.2, 5.2).

One format serves the per-tool threshold (at once, before the result enters history) and the
per-message tool-result budget, so the model always sees the same shape.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

PERSISTED_OUTPUT_TAG = "<persisted-output>"
PERSISTED_OUTPUT_CLOSING_TAG = "</persisted-output>"
PREVIEW_SIZE_BYTES = 2_000
# Cut the preview back to a newline only when that keeps at least this much of it.
PREVIEW_MIN_CUT_BYTES = 1_000

_SAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


def format_size(n_bytes: int) -> str:
    if n_bytes < 1024:
        return f"{n_bytes} bytes"
    if n_bytes < 1024 * 1024:
        return f"{n_bytes / 1024:.1f} KB"
    return f"{n_bytes / (1024 * 1024):.1f} MB"


def preview_text(head: bytes) -> tuple[str, bool]:
    """The preview cut of `head` (at most PREVIEW_SIZE_BYTES of it) and whether it was cut."""
    cut = head[:PREVIEW_SIZE_BYTES]
    was_cut = len(head) > PREVIEW_SIZE_BYTES
    if was_cut:
        newline = cut.rfind(b"\n")
        if newline > PREVIEW_MIN_CUT_BYTES:
            cut = cut[:newline]
    return cut.decode("utf-8", errors="ignore"), was_cut


def build_preview(head: bytes, total_bytes: int, path: Path) -> str:
    """The `<persisted-output>` text for a result of `total_bytes` whose first bytes are `head`."""
    text, was_cut = preview_text(head)
    was_cut = was_cut or total_bytes > len(head)
    lines = [
        PERSISTED_OUTPUT_TAG,
        f"Output too large ({format_size(total_bytes)}). Full output saved to: {path}",
        "",
        f"Preview (first {format_size(min(len(text.encode()), PREVIEW_SIZE_BYTES))}):",
        text.rstrip("\n"),
    ]
    if was_cut:
        lines.append("...")
    lines.append(PERSISTED_OUTPUT_CLOSING_TAG)
    return "\n".join(lines)


def is_persisted_preview(text: str) -> bool:
    return text.startswith(PERSISTED_OUTPUT_TAG)


def tool_result_path(directory: Path, tool_use_id: str, *, structured: bool = False) -> Path:
    """Where a tool_use_id's full output goes; an id can never name a path outside `directory`.

    An id that had to be changed to be safe gets a hash of the original, so two ids never share a file.
    """
    safe = _SAFE_ID.sub("_", tool_use_id)[:128]
    if safe != tool_use_id or not safe:
        safe = f"{safe[:100]}-{hashlib.sha256(tool_use_id.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"
    path = directory / f"{safe}.{'json' if structured else 'txt'}"
    if path.resolve().parent != directory.resolve():
        raise ValueError(f"refusing to write a tool result outside {directory}")
    return path


@dataclass(frozen=True)
class PersistedResult:
    path: Path
    preview: str
    size_bytes: int


def ensure_private_dir(path: Path) -> Path:
    """Create `path` and any missing parents with mode 0700; directories that exist are left alone.

    `mkdir(parents=True, mode=...)` would give the parents the umask's mode (often 0755).
    """
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:
            continue
        os.chmod(directory, 0o700)  # mkdir's mode is filtered by the umask
    return path


def persist_text(text: str, tool_use_id: str, directory: Path, *, structured: bool = False) -> PersistedResult:
    """Write a result's full text to the session's tool-results directory and return its preview."""
    ensure_private_dir(directory)
    path = tool_result_path(directory, tool_use_id, structured=structured)
    data = text.encode("utf-8", errors="surrogateescape")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return PersistedResult(path, build_preview(data[: PREVIEW_SIZE_BYTES + 1], len(data), path), len(data))


def persist_file(source: Path, tool_use_id: str, directory: Path) -> PersistedResult:
    """Move an output file already on disk (Bash streams into one) into place, never reading it whole."""
    ensure_private_dir(directory)
    path = tool_result_path(directory, tool_use_id)
    shutil.move(source, path)
    os.chmod(path, 0o600)
    size = path.stat().st_size
    with path.open("rb") as f:
        head = f.read(PREVIEW_SIZE_BYTES + 1)
    return PersistedResult(path, build_preview(head, size, path), size)
