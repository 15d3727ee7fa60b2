"""Characters that disguise a command are found, each with a visible stand-in."""

from __future__ import annotations

import pytest

from agent_repl.core.permissions.hidden_characters import describe, flagged_characters


def found(text: str) -> list[tuple[str, str]]:
    return [(f.shown, f.kind) for f in flagged_characters(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("git\u200b status", [("<U+200B>", "invisible")]),
        ("a\u200db\u2060c\ufeff", [("<U+200D>", "invisible"), ("<U+2060>", "invisible"), ("<U+FEFF>", "invisible")]),
        ("ls \u202etxt.exe", [("<U+202E>", "invisible")]),
        ("\u2066x\u2069", [("<U+2066>", "invisible"), ("<U+2069>", "invisible")]),
        ("rm\u00a0-rf", [("<U+00A0>", "spacing")]),
        ("x\u3000y", [("<U+3000>", "spacing")]),
        ("\u0441url x", [("<U+0441>", "look-alike")]),  # Cyrillic es in an ASCII word
        ("p\u0430ss", [("<U+0430>", "look-alike")]),
        ("\u0430\u0441\u0435", [("<U+0430>", "look-alike"), ("<U+0441>", "look-alike"), ("<U+0435>", "look-alike")]),
        ("\uff52\uff4d -rf", [("<U+FF52>", "look-alike"), ("<U+FF4D>", "look-alike")]),  # fullwidth
        ("\U0001d42bm", [("<U+1D42B>", "look-alike")]),  # mathematical bold
        ("x\x1b[2J\x07", [("\u241b", "control"), ("\u2407", "control")]),
        ("safe\rEVIL", [("\u240d", "control")]),
    ],
)
def test_disguising_characters_are_flagged(text: str, expected: list[tuple[str, str]]):
    assert found(text) == expected


@pytest.mark.parametrize("text", ["plain ascii", "café crème", "привет мир", "file名.txt", "日本語", "a\tb\nc",
                                  "one\r\ntwo", "e\u0301"])
def test_ordinary_text_is_left_alone(text: str):
    assert flagged_characters(text) == []


def test_a_flag_names_its_character():
    assert describe("\u200b") == "U+200B ZERO WIDTH SPACE"
    assert describe("\u0430") == "U+0430 CYRILLIC SMALL LETTER A"
