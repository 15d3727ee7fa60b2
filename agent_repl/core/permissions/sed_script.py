"""What a sed script does besides editing the text stream: GNU sed's `e` command and `s///e` flag
run shell commands, `w`/`W` and `s///w` write files, `r`/`R` read them.

The script is read command by command, as GNU sed reads it (addresses, `{}` blocks, the `s` and
`y` commands with any delimiter and bracket expressions, `a`/`i`/`c` text). Anything the reader
does not know is reported too: a script it cannot read is never called harmless.
"""

from __future__ import annotations

from dataclasses import dataclass

# Commands with no argument, or an optional number (`l 5`, `q 3`), that only edit the stream.
_PLAIN = set("=dDgGhHlLnNpPqQxzF")


@dataclass(frozen=True)
class SedEffect:
    kind: str  # "runs", "writes", "reads" or "unknown"
    what: str  # a phrase for a one-line reason
    path: str | None = None


def sed_effects(script: str) -> list[SedEffect]:
    """Every command of `script` that runs a program, writes or reads a file, or is not understood."""
    reader = _Reader(script)
    try:
        reader.read()
    except _Unreadable as error:
        reader.effects.append(SedEffect("unknown", f"sed script the checker cannot read ({error})"))
    return reader.effects


class _Unreadable(Exception):
    pass


class _Reader:
    def __init__(self, script: str) -> None:
        self.s = script
        self.i = 0
        self.effects: list[SedEffect] = []

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def skip_blanks(self, newlines: bool = True) -> None:
        while self.peek() and (self.peek() in " \t" or (newlines and self.peek() in "\n;")):
            self.i += 1

    def read(self) -> None:
        while True:
            self.skip_blanks()
            if not self.peek():
                return
            if self.peek() == "#":
                self.to_line_end()
                continue
            self.address()
            self.skip_blanks(newlines=False)
            if self.peek() == ",":
                self.i += 1
                self.skip_blanks(newlines=False)
                self.address(second=True)
                self.skip_blanks(newlines=False)
            while self.peek() == "!":
                self.i += 1
                self.skip_blanks(newlines=False)
            self.command()

    def address(self, second: bool = False) -> None:
        c = self.peek()
        if c.isdigit():
            while self.peek().isdigit():
                self.i += 1
            if self.peek() == "~":
                self.i += 1
                while self.peek().isdigit():
                    self.i += 1
        elif c == "$":
            self.i += 1
        elif c in ("+", "~") and second:
            self.i += 1
            while self.peek().isdigit():
                self.i += 1
        elif c == "/" or c == "\\":
            if c == "\\":
                self.i += 1
            delimiter = self.peek()
            if not delimiter or delimiter in "\n\\":
                raise _Unreadable("an address without a delimiter")
            self.i += 1
            self.regex(delimiter)
            while self.peek() in ("I", "M"):
                self.i += 1

    def regex(self, delimiter: str) -> None:
        """Up to the closing delimiter; `\\x` escapes, and a bracket expression protects it."""
        while True:
            c = self.peek()
            if not c:
                raise _Unreadable("an unterminated regular expression")
            self.i += 1
            if c == "\\":
                if not self.peek():
                    raise _Unreadable("a trailing backslash")
                self.i += 1
            elif c == delimiter:
                return
            elif c == "[":
                self.bracket()

    def bracket(self) -> None:
        if self.peek() == "^":
            self.i += 1
        if self.peek() == "]":
            self.i += 1
        while True:
            c = self.peek()
            if not c or c == "\n":
                raise _Unreadable("an unterminated bracket expression")
            self.i += 1
            if c == "[" and self.peek() in (":", ".", "="):
                close = self.s.find(self.peek() + "]", self.i + 1)
                if close < 0:
                    raise _Unreadable("an unterminated character class")
                self.i = close + 2
            elif c == "]":
                return

    def replacement(self, delimiter: str) -> None:
        while True:
            c = self.peek()
            if not c:
                raise _Unreadable("an unterminated replacement")
            self.i += 1
            if c == "\\":
                if not self.peek():
                    raise _Unreadable("a trailing backslash")
                self.i += 1
            elif c == delimiter:
                return

    def to_line_end(self) -> str:
        end = self.s.find("\n", self.i)
        end = len(self.s) if end < 0 else end
        text, self.i = self.s[self.i : end], end
        return text

    def text_argument(self) -> None:
        """`a`, `i`, `c`: text to the end of the line, continued by a trailing backslash."""
        while True:
            line = self.to_line_end()
            backslashes = len(line) - len(line.rstrip("\\"))
            if backslashes % 2 == 1 and self.peek() == "\n":
                self.i += 1
                continue
            return

    def label(self) -> None:
        while self.peek() and self.peek() not in ";\n":
            self.i += 1

    def filename(self) -> str:
        self.skip_blanks(newlines=False)
        return self.to_line_end()

    def command(self) -> None:
        c = self.peek()
        if not c:
            raise _Unreadable("an address with no command")
        self.i += 1
        if c in "{}":
            return
        if c in _PLAIN:
            self.skip_blanks(newlines=False)
            while self.peek().isdigit():
                self.i += 1
        elif c in "aic":
            self.text_argument()
        elif c in ":bTtv":
            self.skip_blanks(newlines=False)
            self.label()
        elif c == "e":
            self.effects.append(SedEffect("runs", "sed's e command runs a shell command"))
            self.to_line_end()
        elif c in "wW":
            path = self.filename()
            self.effects.append(SedEffect("writes", f"sed's {c} command writes {path or 'a file'}", path))
        elif c in "rR":
            path = self.filename()
            self.effects.append(SedEffect("reads", f"sed's {c} command reads {path or 'a file'}", path))
        elif c == "s":
            self.substitute()
        elif c == "y":
            delimiter = self.peek()
            if not delimiter or delimiter in "\n\\":
                raise _Unreadable("y without a delimiter")
            self.i += 1
            self.replacement(delimiter)
            self.replacement(delimiter)
        else:
            raise _Unreadable(f"the command {c!r}")
        self.skip_blanks(newlines=False)
        if self.peek() and self.peek() not in ";\n}#":
            raise _Unreadable(f"text after a command: {self.peek()!r}")

    def substitute(self) -> None:
        delimiter = self.peek()
        if not delimiter or delimiter in "\n\\":
            raise _Unreadable("s without a delimiter")
        self.i += 1
        self.regex(delimiter)
        self.replacement(delimiter)
        while True:
            c = self.peek()
            if c and (c in "gpiImM" or c.isdigit()):
                self.i += 1
            elif c == "e":
                self.i += 1
                self.effects.append(SedEffect("runs", "sed's s///e flag runs the pattern space as a shell command"))
            elif c == "w":
                self.i += 1
                path = self.filename()
                self.effects.append(SedEffect("writes", f"sed's s///w flag writes {path or 'a file'}", path))
                return
            else:
                return
