"""Tab completion for the input: slash-command names and file paths (no UI library)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MAX_CANDIDATES = 50


@dataclass(frozen=True)
class Completion:
    # The text before the cursor is replaced from `start` on by `replacement`.
    start: int
    replacement: str
    candidates: list[str]


def _common_prefix(words: list[str]) -> str:
    return os.path.commonprefix(words) if words else ""


def complete(text: str, cwd: Path, commands: list[str]) -> Completion | None:
    """Complete the word before the cursor (`text` is everything before it)."""
    if text.startswith("/") and " " not in text and "\n" not in text:
        names = [c for c in commands if c.startswith(text)]
        if not names:
            return None
        replacement = names[0] + " " if len(names) == 1 else _common_prefix(names)
        return Completion(0, replacement, names)
    start = max(text.rfind(" "), text.rfind("\n"), text.rfind("\t")) + 1
    word = text[start:]
    prefix = ""
    if word.startswith("@"):
        prefix, word = "@", word[1:]
    paths = complete_path(word, cwd)
    if not paths:
        return None
    if len(paths) == 1:
        replacement = paths[0] if paths[0].endswith("/") else paths[0] + " "
    else:
        replacement = _common_prefix(paths)
    return Completion(start, prefix + replacement, paths)


def complete_path(word: str, cwd: Path) -> list[str]:
    """Entries whose path starts with `word` (relative to `cwd`); directories end with `/`."""
    expanded = os.path.expanduser(word)
    directory, _, stem = expanded.rpartition("/")
    base = Path(directory or ".") if os.path.isabs(expanded) else cwd / (directory or ".")
    shown_dir = word[: len(word) - len(stem)]
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return []
    found: list[str] = []
    for entry in entries:
        if not entry.name.startswith(stem) or (entry.name.startswith(".") and not stem.startswith(".")):
            continue
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        found.append(shown_dir + entry.name + ("/" if is_dir else ""))
        if len(found) >= MAX_CANDIDATES:
            break
    return found
