"""This project's earlier prompts, for Up/Down in the input (both front ends).

Stored one JSON string per line in `<home>/history/<project slug>.jsonl` (mode 0600, like the
transcripts), so multi-line prompts survive; a torn or malformed line is skipped. Only the newest `limit` prompts are kept in memory.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_repl.core.tooling.redaction import SecretRedactor


def history_path(home: Path, cwd: Path) -> Path:
    # Imported here: the transcript package is heavy, and the app imports this before its first paint.
    from agent_repl.transcript.paths import project_slug

    return home / "history" / f"{project_slug(cwd)}.jsonl"


def _append_private(path: Path, line: str) -> None:
    """Append to a file only its owner can read (0600, in 0700 directories): it holds what was typed."""
    from agent_repl.core.tooling.persisted_output import ensure_private_dir

    ensure_private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        if os.fstat(f.fileno()).st_mode & 0o077:
            os.fchmod(f.fileno(), 0o600)  # written before this rule, or narrowed by nobody
        f.write(line)


class PromptHistory:
    def __init__(self, path: Path | None = None, *, limit: int = 1_000, redactor: SecretRedactor | None = None) -> None:
        """`redactor` takes credentials out of what is written (typed text is recalled as typed)."""
        self.path = path
        self.limit = limit
        self.redactor = redactor
        self.entries: list[str] = []
        # Browsing position: len(entries) means "the draft being typed".
        self._cursor = 0
        self._draft = ""

    def load(self) -> PromptHistory:
        if self.path is None:
            return self
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            lines = []
        entries: list[str] = []
        for line in lines[-self.limit :]:
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, str) and value.strip():
                entries.append(value)
        self.entries = entries
        self._cursor = len(entries)
        return self

    def append(self, text: str) -> None:
        text = text.rstrip()
        if not text.strip():
            return
        if not self.entries or self.entries[-1] != text:
            self.entries.append(text)
            del self.entries[: -self.limit]
            if self.path is not None:
                try:
                    _append_private(self.path, json.dumps(self._redacted(text), ensure_ascii=False) + "\n")
                except OSError:
                    pass  # history is a convenience; a read-only home must not stop the prompt
        self._cursor = len(self.entries)
        self._draft = ""

    def _redacted(self, text: str) -> str:
        if self.redactor is None:
            # Imported on first use: the app imports this module before its first paint.
            from agent_repl.core.tooling.redaction import SecretRedactor

            self.redactor = SecretRedactor()
        return self.redactor.text(text)

    def previous(self, current: str) -> str | None:
        """The prompt before the one shown (the draft is kept), or None at the oldest."""
        if self._cursor == 0:
            return None
        if self._cursor == len(self.entries):
            self._draft = current
        self._cursor -= 1
        return self.entries[self._cursor]

    def next(self) -> str | None:
        """The prompt after the one shown, then the draft; None when already at the draft."""
        if self._cursor >= len(self.entries):
            return None
        self._cursor += 1
        return self._draft if self._cursor == len(self.entries) else self.entries[self._cursor]

    def reset_browsing(self) -> None:
        self._cursor = len(self.entries)
