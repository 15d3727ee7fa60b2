"""A command as a permission dialog shows it: every character visible, the risky parts marked, and
all of it on screen, or its start and its end with a count of the lines between.

`command_view(command, width, height)` is a pure function both front ends draw from (the app's
dialog and the inline prompt): lines of styled pieces at most `width` cells wide, at most `height`
lines, plus one note per kind of risk found. Nothing here talks to a terminal.

- Flagged characters (controls, zero-width and bidi characters, odd spaces, look-alike letters)
  are replaced by a visible stand-in (`␛`, `<U+200B>`).
- A run of spaces or of blank lines (padding that would push the rest out of view) is shown as
  `<250 spaces>` or `<40 blank lines>`.
- Lines wrap at the width, at a space when one is near; a line too long for `height` keeps its
  first and last lines around `… 12 more lines …`; the key given reads all of it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Literal

from rich.cells import cell_len
from rich.text import Text

from agent_repl.core.permissions.command_marks import CommandMark, command_marks, parse_hazards
from agent_repl.core.permissions.hidden_characters import FlaggedChar, describe, flagged_characters

PieceStyle = Literal["plain", "risk", "flag", "elided"]
STYLES: dict[PieceStyle, str] = {
    "plain": "",
    "risk": "bold red underline",
    "flag": "bold black on yellow",
    "elided": "italic dim",
}
# A run this long of spaces (or of blank lines) is shown by its count.
SPACE_RUN = 8
BLANK_RUN = 3
_NOTE_NAMES = 2
# A dialog lists this many kinds of risk at most (the viewer lists them all).
MAX_NOTES = 6


@dataclass(frozen=True)
class Piece:
    text: str
    style: PieceStyle = "plain"


Line = tuple[Piece, ...]


@dataclass(frozen=True)
class CommandView:
    lines: list[Line]
    notes: list[str]
    # Display lines left out between the start and the end (0: the whole command is shown).
    hidden_lines: int = 0
    total_lines: int = 0

    def text(self) -> str:
        """The lines as plain text (what a terminal shows, without the styles)."""
        return "\n".join("".join(p.text for p in line) for line in self.lines)


@dataclass
class _Token:
    text: str
    style: PieceStyle
    width: int = field(init=False)

    def __post_init__(self) -> None:
        self.width = cell_len(self.text)


def _tokens(line: str, offset: int, risky: set[int], flags: dict[int, FlaggedChar]) -> list[_Token]:
    """One logical line as display tokens: a character each, a flagged character's stand-in, or a
    whole run of spaces."""
    tokens: list[_Token] = []
    i = 0
    while i < len(line):
        char, index = line[i], offset + i
        if char == " ":
            end = i
            while end < len(line) and line[end] == " ":
                end += 1
            if end - i >= SPACE_RUN:
                tokens.append(_Token(f"<{end - i} spaces>", "flag"))
                i = end
                continue
        if index in flags:
            tokens.append(_Token(flags[index].shown, "flag"))
        elif char == "\t":
            tokens.append(_Token("␉", "flag"))
        elif unicodedata.category(char) in ("Mn", "Me") and tokens and tokens[-1].text.isprintable():
            tokens[-1] = _Token(tokens[-1].text + char, tokens[-1].style)  # an accent stays on its letter
        else:
            tokens.append(_Token(char, "risk" if index in risky else "plain"))
        i += 1
    return tokens


def _wrap(tokens: list[_Token], width: int) -> list[list[_Token]]:
    """Lines of at most `width` cells; a break goes after a space in the second half of the line."""
    lines: list[list[_Token]] = [[]]
    used = 0
    for token in tokens:
        if used + token.width > width and lines[-1]:
            current = lines[-1]
            spaces = [k for k, t in enumerate(current) if t.text == " " and k > 0]
            cut = spaces[-1] + 1 if spaces and sum(t.width for t in current[: spaces[-1] + 1]) > width // 2 else len(current)
            lines[-1], rest = current[:cut], current[cut:]
            lines.append(rest)
            used = sum(t.width for t in rest)
        lines[-1].append(token)
        used += token.width
    return lines


def _pieces(tokens: list[_Token]) -> Line:
    pieces: list[Piece] = []
    for token in tokens:
        if pieces and pieces[-1].style == token.style and token.style != "flag":
            pieces[-1] = Piece(pieces[-1].text + token.text, token.style)
        else:
            pieces.append(Piece(token.text, token.style))
    return tuple(pieces)


def _is_blank(line: str) -> bool:
    return not line.strip(" \t")


def command_view(
    command: str, width: int, height: int | None = None, *, shell: bool = True, more_key: str = "v",
    what: str = "command",
) -> CommandView:
    """`command` laid out for a dialog `width` cells wide and at most `height` lines tall (None: no limit)."""
    width = max(width, 12)
    marks, _ = command_marks(command) if shell else ([], True)
    risky = {i for mark in marks for i in range(mark.start, mark.end)}
    flags = {f.index: f for f in flagged_characters(command)}
    lines: list[Line] = []
    logical = command.split("\n")
    offsets, position = [], 0
    for text in logical:
        offsets.append(position)
        position += len(text) + 1
    # A carriage return before a newline is a Windows line ending, not a character to show.
    logical = [t[:-1] if t.endswith("\r") and k < len(logical) - 1 else t for k, t in enumerate(logical)]
    i = 0
    while i < len(logical):
        run = i
        while run < len(logical) and _is_blank(logical[run]):
            run += 1
        if run - i >= BLANK_RUN:
            lines.append((Piece(f"<{run - i} blank lines>", "flag"),))
            i = run
            continue
        for wrapped in _wrap(_tokens(logical[i], offsets[i], risky, flags), width):
            lines.append(_pieces(wrapped))
        i += 1
    notes = command_notes(command, shell=shell, marks=marks)
    total = len(lines)
    if height is None or total <= max(height, 3):
        return CommandView(lines, notes, 0, total)
    height = max(height, 3)
    head = (height - 1) // 2
    tail = height - 1 - head
    hidden = total - head - tail
    more = f"… {hidden} more lines · {more_key} shows the whole {what} …"
    middle: Line = (Piece(more if cell_len(more) <= width else f"… {hidden} more lines …", "elided"),)
    return CommandView([*lines[:head], middle, *lines[total - tail :]], notes, hidden, total)


def _names(flags: list[FlaggedChar], command: str) -> str:
    seen: list[str] = []
    for flag in flags:
        name = describe(command[flag.index]) if flag.kind != "control" else flag.shown
        if name not in seen:
            seen.append(name)
    more = f" and {len(seen) - _NOTE_NAMES} more" if len(seen) > _NOTE_NAMES else ""
    return ", ".join(seen[:_NOTE_NAMES]) + more


_CHAR_NOTES = {
    "control": "control characters are shown as symbols, not obeyed",
    "invisible": "invisible characters shown as <U+…>",
    "spacing": "spaces the shell does not split words on, shown as <U+…>",
    "look-alike": "look-alike letters shown as <U+…>",
}


def command_notes(
    command: str, *, shell: bool = True, marks: list[CommandMark] | None = None, limit: int | None = None
) -> list[str]:
    """One line per kind of risk in `command`, in the order they first appear (`limit`: at most
    that many, the last one then saying how many more there are)."""
    complete = True
    if marks is None:
        marks, complete = command_marks(command) if shell else ([], True)
    elif shell:
        complete = command_marks(command)[1]
    multiline = "\n" in command.strip("\n")
    kinds: dict[str, list[CommandMark]] = {}
    for mark in marks:
        kinds.setdefault(mark.kind, []).append(mark)
    notes: list[str] = []
    for same in kinds.values():
        first = same[0]
        where = f" (line {command.count(chr(10), 0, first.start) + 1})" if multiline else ""
        more = f", and {len(same) - 1} more like it" if len(same) > 1 else ""
        notes.append(first.note + where + more)
    if shell:
        notes.extend(h for h in parse_hazards(command) if h not in notes)
    flags = flagged_characters(command)
    for kind, text in _CHAR_NOTES.items():
        found = [f for f in flags if f.kind == kind]
        if found:
            notes.append(f"{text}: {_names(found, command)}")
    lines = command.split("\n")
    if any(" " * SPACE_RUN in line for line in lines) or any(
        all(_is_blank(x) for x in lines[k : k + BLANK_RUN]) and len(lines[k : k + BLANK_RUN]) == BLANK_RUN
        for k in range(len(lines))
    ):
        notes.append("long runs of spaces or blank lines are shown by their count")
    if shell and not complete:
        notes.append("the shell parser could not read the whole line: some risks may not be marked")
    if limit is not None and len(notes) > limit:
        notes = [*notes[: limit - 1], f"and {len(notes) - limit + 1} more risks: v shows them all"]
    return notes


def visible_text(text: str) -> str:
    """`text` with every flagged character replaced by its stand-in (for one-line labels)."""
    flags = {f.index: f.shown for f in flagged_characters(text)}
    return "".join(flags.get(i, c) for i, c in enumerate(text)).replace("\n", "␊").replace("\t", "␉")


def always_label(rules: tuple[str, ...], command: str) -> str:
    """What "always" saves, rule by rule, exactly; a rule that is the whole (long) command line
    says so instead of repeating it."""
    shown = []
    for rule in rules:
        if len(rule) > 60 and rule.endswith(")") and rule[rule.index("(") + 1 : -1] == command:
            shown.append(f"{rule[: rule.index('(')]}(this exact command line)")
        else:
            shown.append(visible_text(rule))
    return " and ".join(shown)


def as_text(line: Line) -> Text:
    """A view line as rich Text, with the pieces' styles."""
    text = Text(no_wrap=True, overflow="crop", end="")
    for piece in line:
        text.append(piece.text, style=STYLES[piece.style])
    return text


def view_text(view: CommandView) -> Text:
    return Text("\n", no_wrap=True, end="").join(as_text(line) for line in view.lines)


MODEL_SAYS = "the model says: "


def model_says(description: str, limit: int = 300) -> str:
    """The model's own description of its call, labelled as the model's words: one paragraph,
    every character visible, cut after `limit` characters. Never a stand-in for the command."""
    flags = {f.index: f.shown for f in flagged_characters(description)}
    text = " ".join("".join(flags.get(i, c) for i, c in enumerate(description)).split())
    if not text:
        return ""
    return MODEL_SAYS + (text if len(text) <= limit else text[: limit - 1] + "…")


def wrapped(text: str, width: int, max_lines: int | None = None) -> list[str]:
    """Plain text (a note, the model's words) wrapped as commands are, every character visible; cut
    to `max_lines` lines, the last ending in `…`, when longer."""
    width = max(width, 12)
    flags = {f.index: f for f in flagged_characters(text)}
    lines = ["".join(t.text for t in row) for row in _wrap(_tokens(text.replace("\n", " "), 0, set(), flags), width)]
    if max_lines is not None and len(lines) > max_lines:
        lines = lines[:max_lines]
        last = lines[-1] if max_lines else ""
        while last and cell_len(last) + 1 > width:
            last = last[:-1]
        lines[-1:] = [last.rstrip() + "…"] if max_lines else []
    return lines
