"""Line numbers on file text shown to the model: the number, a tab, then the line.

Read, Edit's snippet and the files brought back after a compaction all number lines this way, so
the model sees one format; `strip_line_numbers` undoes it (and the older padded `     N→` form)
when the model copies numbered lines into an edit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_PREFIX = re.compile(r"^(?:(\d+)\t| *(\d+)\u2192)")


def numbered_line(number: int, text: str) -> str:
    return f"{number}\t{text}"


def number_lines(lines: Iterable[str], start: int = 1) -> str:
    return "\n".join(numbered_line(n, line) for n, line in enumerate(lines, start))


def strip_line_numbers(text: str) -> str | None:
    """`text` without a line-number prefix on each line, when every line carries one and the
    numbers run consecutively (as copied from a Read); None otherwise."""
    lines = text.split("\n")
    stripped: list[str] = []
    previous: int | None = None
    for line in lines:
        match = _PREFIX.match(line)
        if match is None:
            return None
        number = int(match.group(1) or match.group(2))
        if previous is not None and number != previous + 1:
            return None
        previous = number
        stripped.append(line[match.end() :])
    return "\n".join(stripped)
