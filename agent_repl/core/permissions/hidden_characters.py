"""Characters that make a command look like something it is not, found so a dialog can show them.

Four kinds, each shown by a visible stand-in instead of itself:
- control: C0/C1 controls and DEL (an escape could repaint the screen), shown as their symbol (`␛`);
- invisible: zero-width, bidi-control and other format characters, shown as `<U+200B>`;
- spacing: spaces other than the ASCII space (the shell does not split words on them), `<U+00A0>`;
- look-alike: letters that pass for ASCII ones: a fullwidth or styled form of an ASCII character,
  a letter of another script inside a word with ASCII letters (`pаss` with a Cyrillic `а`), or a
  word made only of letters that look Latin (`сurl` spelt in Cyrillic), shown as `<U+0430>`.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Literal

from agent_repl.core.model.visible import show_controls

CharKind = Literal["control", "invisible", "spacing", "look-alike"]

# Not format characters by category, yet drawn as nothing: Hangul fillers, the braille blank,
# the combining grapheme joiner, variation selectors.
_BLANK_LETTERS = {0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x034F, 0x180B, 0x180C, 0x180D, 0x180F}
_VARIATION_SELECTORS = (range(0xFE00, 0xFE10), range(0xE0100, 0xE01F0))
# Letters of other scripts drawn like an ASCII letter (not exhaustive; a word mixing scripts is
# caught whatever its letters).
_LOOKS_LATIN = set(
    "аеорсухѕіјԁԛԝһӏүАВЕКМНОРСТХЅІЈҮԚԜӀ"  # Cyrillic
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοινακρϲϳ"  # Greek
    "օսհոզ"  # Armenian
    "ıɑɡɩʟ"  # Latin letters that pass for other ASCII ones
)
# Scripts whose letters are drawn like Latin ones: one of them inside an ASCII word is a disguise.
_LATIN_LIKE_SCRIPTS = {"CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC", "LISU"}


@dataclass(frozen=True)
class FlaggedChar:
    index: int
    kind: CharKind
    shown: str

    @property
    def code(self) -> str:
        return self.shown if self.kind == "control" else self.shown.strip("<>")


def _code(char: str) -> str:
    return f"<U+{ord(char):04X}>"


def _plain_kind(char: str) -> CharKind | None:
    """The kind of a character that is suspect on its own, whatever surrounds it."""
    code = ord(char)
    if char in "\t\n" or 0x20 <= code < 0x7F:
        return None
    if code < 0x20 or code == 0x7F or 0x80 <= code <= 0x9F:
        return "control"
    category = unicodedata.category(char)
    if category in ("Cf", "Zl", "Zp") or code in _BLANK_LETTERS or any(code in r for r in _VARIATION_SELECTORS):
        return "invisible"
    if category == "Zs":
        return "spacing"
    if category.startswith(("L", "N", "P", "S")):
        folded = unicodedata.normalize("NFKC", char)
        if folded != char and folded.isascii() and folded.isprintable() and char != "…":
            return "look-alike"  # fullwidth `ｒ`, mathematical `𝐫`, the ligature `ﬁ`
    return None


def _script(char: str) -> str:
    return unicodedata.name(char, "UNKNOWN").split(" ", 1)[0]


def _mixed_words(text: str, flagged: set[int]) -> list[int]:
    """Indices of letters that disguise a word: another script inside an ASCII word, or a word
    spelt wholly in letters that look Latin."""
    found: list[int] = []
    start = None
    for i, char in enumerate([*text, " "]):
        if char.isalpha() and i not in flagged:
            if start is None:
                start = i
            continue
        if start is not None:
            word = range(start, i)
            has_ascii = any(text[j].isascii() for j in word)
            foreign = [j for j in word if not text[j].isascii() and (_script(text[j]) in _LATIN_LIKE_SCRIPTS or text[j] in _LOOKS_LATIN)]
            if has_ascii and foreign:
                found.extend(foreign)
            elif not has_ascii and all(text[j] in _LOOKS_LATIN for j in word):
                found.extend(word)
            start = None
    return found


def flagged_characters(text: str) -> list[FlaggedChar]:
    """Every character of `text` a reader could misread, in order, with what to show instead."""
    flags: dict[int, FlaggedChar] = {}
    for i, char in enumerate(text):
        kind = _plain_kind(char)
        if kind == "control":
            if char == "\r" and text[i + 1 : i + 2] == "\n":
                continue  # a Windows line ending is a line ending
            flags[i] = FlaggedChar(i, kind, show_controls(char))
        elif kind is not None:
            flags[i] = FlaggedChar(i, kind, _code(char))
    for i in _mixed_words(text, set(flags)):
        flags[i] = FlaggedChar(i, "look-alike", _code(text[i]))
    return [flags[i] for i in sorted(flags)]


def describe(char: str) -> str:
    """`U+0430 CYRILLIC SMALL LETTER A`: a flagged character by code point and name."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X} {name}".strip()
