"""Line diffs of a file change, in the shape Claude Code stores as `structuredPatch`.

A hunk is `{oldStart, oldLines, newStart, newLines, lines}` where each line is the text prefixed
with " ", "-" or "+" (no newline), with three lines of context, like a unified diff. The same
hunks feed the permission prompt, the tool block and the transcript, so what the user approved
is what was written down.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

CONTEXT_LINES = 3


def _lines(text: str) -> list[str]:
    return text.splitlines()


def structured_patch(old: str, new: str, context: int = CONTEXT_LINES) -> list[dict[str, Any]]:
    """The hunks turning `old` into `new` (empty when they are equal)."""
    a, b = _lines(old), _lines(new)
    hunks: list[dict[str, Any]] = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context):
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(" " + line for line in a[i1:i2])
                continue
            if tag in ("replace", "delete"):
                lines.extend("-" + line for line in a[i1:i2])
            if tag in ("replace", "insert"):
                lines.extend("+" + line for line in b[j1:j2])
        first, last = group[0], group[-1]
        old_lines, new_lines = last[2] - first[1], last[4] - first[3]
        hunks.append(
            {
                # Like `diff -u`, an empty side starts at the line before it (0 for an empty file).
                "oldStart": first[1] + 1 if old_lines else first[1],
                "oldLines": old_lines,
                "newStart": first[3] + 1 if new_lines else first[3],
                "newLines": new_lines,
                "lines": lines,
            }
        )
    return hunks


@dataclass(frozen=True)
class DiffStats:
    added: int
    removed: int

    def text(self) -> str:
        parts = []
        if self.added:
            parts.append(f"{self.added} line{'s' if self.added != 1 else ''} added")
        if self.removed:
            parts.append(f"{self.removed} line{'s' if self.removed != 1 else ''} removed")
        return ", ".join(parts) or "no line changed"


def patch_stats(hunks: list[dict[str, Any]]) -> DiffStats:
    added = removed = 0
    for hunk in hunks:
        for line in hunk.get("lines") or []:
            if isinstance(line, str) and line.startswith("+"):
                added += 1
            elif isinstance(line, str) and line.startswith("-"):
                removed += 1
    return DiffStats(added, removed)


@dataclass(frozen=True)
class FileChange:
    """What a file tool is about to do, shown in the permission prompt before it happens."""

    path: str
    # The path as the user reads it (relative to the project when inside it).
    display_path: str
    # None: the file does not exist yet.
    old_text: str | None
    new_text: str
    hunks: list[dict[str, Any]]
    # Outside the project, an edit is asked every time (also in acceptEdits).
    outside_project: bool = False
    # Why the file is protected (agent_repl.core.permissions.protected_paths): asked every time, in every mode.
    protected: str | None = None

    @property
    def is_new_file(self) -> bool:
        return self.old_text is None
