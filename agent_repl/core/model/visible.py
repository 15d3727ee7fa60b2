"""Text from a model, a tool or a file, made safe to put on a terminal (docs/architecture.md 8.5).

Every front end shows untrusted strings through `show_controls`: control and escape characters
become visible symbols instead of acting on the terminal, so output cannot clear the screen,
move the cursor, retitle the window or make a dialog say something the command does not.
"""

from __future__ import annotations

import re

# C0 controls map to the Unicode "Control Pictures" block (U+2400 + code); DEL has its own picture.
_C0_PICTURE = {code: chr(0x2400 + code) for code in range(0x20)}
_C0_PICTURE[0x7F] = "\u2421"
# Characters that reorder or hide text (Trojan Source) are shown by name-free code points.
_INVISIBLE = {
    *range(0x202A, 0x202F),  # bidi embeddings and overrides
    *range(0x2066, 0x206A),  # bidi isolates
    0x200E,
    0x200F,
    0x061C,  # directional marks
    0xFEFF,  # byte-order mark / zero-width no-break space
}
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f\x80-\x9f"
    + "".join(re.escape(chr(c)) for c in sorted(_INVISIBLE))
    + "]|\r(?!\n)"
)


def _picture(match: re.Match[str]) -> str:
    char = match.group(0)
    code = ord(char)
    if code in _C0_PICTURE:
        return _C0_PICTURE[code]
    if 0x80 <= code <= 0x9F:
        return f"\\x{code:02x}"
    return f"<U+{code:04X}>"


def show_controls(text: str, *, newlines: bool = True, tabs: bool = True) -> str:
    """`text` with every control or escape character replaced by a visible stand-in.

    Newlines and tabs are kept unless asked otherwise (a one-line header passes
    `newlines=False`); a carriage return before a newline is dropped, any other becomes `␍`.
    """
    shown = _UNSAFE.sub(_picture, text.replace("\r\n", "\n"))
    if not newlines:
        shown = shown.replace("\n", _C0_PICTURE[0x0A])
    if not tabs:
        shown = shown.replace("\t", _C0_PICTURE[0x09])
    return shown


