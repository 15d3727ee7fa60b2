"""Long pastes stand in the input as `[Pasted text #1 +60 lines]` and are expanded when sent.

As in Claude Code: a paste of many lines would fill the input, so the input shows a short
placeholder and the message sent carries the whole text. Shared by the app and the inline REPL.
"""

from __future__ import annotations

import re

# A paste longer than this (in lines or characters) is collapsed.
COLLAPSE_LINES = 10
COLLAPSE_CHARS = 1_000
_PLACEHOLDER = re.compile(r"\[Pasted text #(\d+) (?:\+[\d,]+ lines|[\d,]+ chars)\]")


class PastedTexts:
    def __init__(self) -> None:
        self._texts: dict[int, str] = {}

    def placeholder_for(self, text: str) -> str | None:
        """The placeholder to insert instead of `text`, or None when it is short enough to show."""
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = len(text.splitlines())
        if lines <= COLLAPSE_LINES and len(text) <= COLLAPSE_CHARS:
            return None
        number = len(self._texts) + 1
        self._texts[number] = text
        size = f"+{lines:,} lines" if lines > 1 else f"{len(text):,} chars"
        return f"[Pasted text #{number} {size}]"

    def expand(self, line: str) -> str:
        """`line` with every placeholder still in it replaced by the text it stands for."""

        def whole(match: re.Match[str]) -> str:
            return self._texts.get(int(match.group(1)), match.group(0))

        return _PLACEHOLDER.sub(whole, line) if self._texts else line

    def clear(self) -> None:
        self._texts.clear()
