"""A key that does more when pressed again soon: Ctrl+C twice exits, Esc twice rewinds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# The second press counts within this many seconds of the first.
SECOND_PRESS_WINDOW = 2.0


@dataclass
class SecondPress:
    clock: Callable[[], float]
    window: float = SECOND_PRESS_WINDOW
    _first: float | None = None

    def press(self) -> bool:
        """Whether this press is the second one; if not, it is the first of a new pair."""
        now = self.clock()
        second = self._first is not None and now - self._first <= self.window
        self._first = None if second else now
        return second

    def reset(self) -> None:
        self._first = None
