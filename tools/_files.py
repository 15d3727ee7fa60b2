"""Reading and writing text files for Edit and Write: encoding, line endings, binary refusal.

A file is decoded the way it was written (UTF-8, UTF-8 or UTF-16 with a byte-order mark, and
Latin-1 for bytes that are not UTF-8, which round-trips every byte) and encoded back the same
way, so an edit changes only the bytes it means to. Writes go to a temporary file beside the
target and replace it in one rename (`agent_repl.core.tooling.atomic`).
"""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

from agent_repl.core.tooling.atomic import write_atomic as write_atomic
from agent_repl.core.tooling.numbering import number_lines
from agent_repl.core.tooling.persisted_output import format_size

MAX_EDIT_BYTES = 16 * 1024 * 1024
_SNIFF_BYTES = 8_192
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
BINARY_EXTENSIONS = frozenset(
    (
        ".png .jpg .jpeg .gif .webp .pdf .zip .gz .tgz .bz2 .xz .zst .7z .rar .tar .jar .whl .exe .dll .so "
        ".dylib .o .a .class .pyc .pyo .bin .dat .sqlite .db .ico .bmp .tiff .mp3 .mp4 .mov .avi .wav .flac "
        ".ogg .woff .woff2 .ttf .otf .parquet .npy .pkl"
    ).split()
)


class FileError(Exception):
    """Why a file cannot be edited; the message is meant for the model."""


@dataclass(frozen=True)
class TextFile:
    path: Path
    data: bytes
    text: str
    encoding: str
    bom: bytes
    # The file's usual line ending: "\r\n" when most of its lines end so, else "\n".
    newline: str
    mode: int

    def encode(self, text: str) -> bytes:
        try:
            return self.bom + text.encode(self.encoding)
        except UnicodeEncodeError as exc:
            raise FileError(
                f"{self.path} is stored as {self.encoding}, which cannot hold the character "
                f"{text[exc.start]!r} of the new text; leave it out or convert the file first."
            ) from exc


def _decode(data: bytes) -> tuple[str, str, bytes]:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, errors="strict"), encoding, bom
    try:
        return data.decode("utf-8"), "utf-8", b""
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1", b""


def usual_newline(text: str) -> str:
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"


def load_text(path: Path) -> TextFile:
    """The file decoded as it was written. Raises FileError for anything Edit cannot change."""
    try:
        st = path.stat()
    except FileNotFoundError as exc:
        raise FileError(f"File does not exist: {path}") from exc
    except OSError as exc:
        raise FileError(f"Cannot read {path}: {exc.strerror or exc}") from exc
    if stat.S_ISDIR(st.st_mode):
        raise FileError(f"{path} is a directory, not a file.")
    if not stat.S_ISREG(st.st_mode):
        raise FileError(f"{path} is not a regular file; only regular text files can be edited.")
    if st.st_size > MAX_EDIT_BYTES:
        raise FileError(
            f"{path} is {format_size(st.st_size)}, over the {format_size(MAX_EDIT_BYTES)} a file may be to "
            "edit it here. Change it with Bash (sed, a script) instead."
        )
    if path.suffix.lower() in BINARY_EXTENSIONS:
        raise FileError(f"{path} is a binary file ({path.suffix}); Edit and Write only change text files.")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FileError(f"Cannot read {path}: {exc.strerror or exc}") from exc
    utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff"))
    if not utf16 and b"\x00" in data[:_SNIFF_BYTES]:
        raise FileError(f"{path} looks like a binary file (it holds NUL bytes); Edit and Write only change text files.")
    try:
        text, encoding, bom = _decode(data)
    except UnicodeDecodeError as exc:
        raise FileError(f"{path} starts with a byte-order mark but is not valid {exc.encoding}.") from exc
    return TextFile(path, data, text, encoding, bom, usual_newline(text), stat.S_IMODE(st.st_mode))


def changed_lines(hunks: list[dict]) -> list[int]:
    """The line numbers in the new text where the hunks add lines or remove them."""
    marks: list[int] = []
    for hunk in hunks:
        number = hunk["newStart"] if hunk["newLines"] else hunk["newStart"] + 1
        for line in hunk["lines"]:
            if line.startswith("+"):
                marks.append(number)
                number += 1
            elif line.startswith("-"):
                marks.append(number)
            else:
                number += 1
    return marks


def numbered_snippet(text: str, hunks: list[dict], context: int = 4, max_lines: int = 40) -> str:
    """The changed region of `text` with line numbers (`cat -n` style), a few lines around it;
    a change spread over more than `max_lines` shows its first part."""
    lines = text.splitlines()
    marks = changed_lines(hunks)
    if not marks or not lines:
        return ""
    start = max(1, min(marks) - context)
    end = min(len(lines), max(marks) + context, start + max_lines - 1)
    return number_lines(lines[start - 1 : end], start)
