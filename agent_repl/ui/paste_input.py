"""Reading a big bracketed paste in bulk, so a paste of megabytes does not freeze the app.

Textual's terminal parser takes its input one character at a time through a generator: a 5 MB
paste keeps the input thread busy (and the GIL held) for many seconds, and every key typed
meanwhile waits. `BulkPasteParser` finds the paste's end marker with `str.find` and hands
Textual's parser only what lies outside pastes; `BulkPasteDriver` is Textual's Linux driver
reading through it.
"""

from __future__ import annotations

import os
import selectors
from codecs import getincrementaldecoder
from collections.abc import Generator, Iterable

from textual import events
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
READ_SIZE = 64 * 1024


def _split_marker(data: str, marker: str) -> int:
    """How many characters at the end of `data` could be the start of `marker` (cut between reads)."""
    for size in range(min(len(marker) - 1, len(data)), 0, -1):
        if data.endswith(marker[:size]):
            return size
    return 0


class BulkPasteParser(XTermParser):
    """Textual's parser, except that the text of a bracketed paste is read in bulk."""

    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        self._pasted: list[str] | None = None
        self._held = ""  # the start of an end marker, cut off by the end of a read
        # What could be the start of a paste marker, cut off by the end of a read: Textual's parser
        # has it (it may be a key, Esc), and is started afresh if the next read completes a marker.
        self._maybe_start = ""

    def _between_keys(self) -> bool:
        """Textual's parser is waiting for a new key, not inside an escape sequence."""
        awaiting = self._awaiting
        return awaiting is not None and awaiting.timeout is None

    def feed(self, data: str) -> Iterable[Message]:
        if not data:  # the end of input
            yield from super().feed(data)
            return
        data, self._held = self._held + data, ""
        if self._maybe_start:
            data = yield from self._complete_start(data)
        while data:
            if self._pasted is not None:
                end = data.find(PASTE_END)
                if end < 0:
                    cut = _split_marker(data, PASTE_END)
                    self._pasted.append(data[: len(data) - cut])
                    self._held = data[len(data) - cut :]
                    return
                self._pasted.append(data[:end])
                text, self._pasted = "".join(self._pasted), None
                yield events.Paste(text.replace("\x00", ""))
                data = data[end + len(PASTE_END) :]
                continue
            start = data.find(PASTE_START)
            if start < 0:
                cut = _split_marker(data, PASTE_START)
                if cut and len(data) > cut:
                    yield from super().feed(data[:-cut])
                if cut and self._between_keys():
                    self._maybe_start = data[-cut:]
                yield from super().feed(data[-cut:] if cut and len(data) > cut else data)
                return
            if start:
                yield from super().feed(data[:start])  # (an empty feed would mean the end of input)
            if not self._between_keys():
                yield from super().feed(data[start:])  # inside a sequence: Textual's parser decides
                return
            self._pasted = []
            data = data[start + len(PASTE_START) :]


    def _complete_start(self, data: str) -> Generator[Message, None, str]:
        """The rest of this read once a paste marker cut between reads is complete (the paste then
        begins), else all of it (Textual's parser goes on with what it was given)."""
        whole, self._maybe_start = self._maybe_start + data, ""
        if self._between_keys():
            return data  # its wait for the rest of a sequence ran out: it was a key after all
        if whole.startswith(PASTE_START):
            self._gen = self.parse(self._tokens.append)  # forget the marker's first characters
            self._awaiting = next(self._gen)
            self._timeout_time = None
            self._pasted = []
            return whole[len(PASTE_START) :]
        if PASTE_START.startswith(whole):
            self._maybe_start = whole  # still not all of it
            yield from super().feed(data)
            return ""
        return data


class BulkPasteDriver(LinuxDriver):
    """Textual's Linux driver, reading the terminal through `BulkPasteParser` in bigger reads."""

    def run_input_thread(self) -> None:
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        parser = BulkPasteParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode

        def process(ready: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> None:
            for index, (_key, mask) in enumerate(ready):
                if mask & selectors.EVENT_READ:
                    text = decode(os.read(self.fileno, READ_SIZE), final=final and index == len(ready) - 1)
                    if not text:
                        break
                    for event in parser.feed(text):
                        self.process_message(event)
            for event in parser.tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                process(selector.select(0.1))
            selector.unregister(self.fileno)
            process(selector.select(0.1), final=True)
        finally:
            selector.close()
            try:
                for _event in parser.feed(""):
                    pass
            except (EOFError, ParseError):  # the end of input may come mid-sequence
                pass
