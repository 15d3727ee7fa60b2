"""`BulkPasteParser` reads what Textual's own parser reads (the same events, in the same order,
however the input is cut into reads), and reads a big paste in one piece instead of character by
character (counted by the characters Textual's parser is given, not by time)."""

from __future__ import annotations

from textual import events
from textual._xterm_parser import XTermParser

from agent_repl.ui.paste_input import PASTE_END, PASTE_START, BulkPasteParser

PASTED = "first line\nsecond [line] with ~ and ü\n" * 3
STREAM = f"ab{PASTE_START}{PASTED}{PASTE_END}c\x1b[A{PASTE_START}x{PASTE_END}\r"


def parsed(parser: XTermParser, pieces: list[str]) -> list[tuple[str, str]]:
    found = []
    for piece in pieces:
        for event in parser.feed(piece):
            if isinstance(event, events.Paste):
                found.append(("paste", event.text))
            elif isinstance(event, events.Key):
                found.append(("key", event.key))
    return found


def test_the_same_events_as_textuals_parser_wherever_the_reads_are_cut():
    expected = parsed(XTermParser(), [STREAM])
    assert expected == [("key", "a"), ("key", "b"), ("paste", PASTED), ("key", "c"), ("key", "up"),
                        ("paste", "x"), ("key", "enter")]  # fmt: skip
    for cut in range(1, len(STREAM)):
        assert parsed(BulkPasteParser(), [STREAM[:cut], STREAM[cut:]]) == expected, cut
    for size in (1, 2, 3, 7):
        pieces = [STREAM[i : i + size] for i in range(0, len(STREAM), size)]
        assert parsed(BulkPasteParser(), pieces) == expected, size




def test_a_paste_with_escapes_in_it_comes_through_whole():
    # Copied coloured terminal output: Textual's own parser breaks it into keys at the first escape.
    pasted = "error: \x1b[31mfailed\x1b[0m\nnext line\n"
    stream = f"{PASTE_START}{pasted}{PASTE_END}k"
    for cut in range(1, len(stream)):
        assert parsed(BulkPasteParser(), [stream[:cut], stream[cut:]]) == [("paste", pasted), ("key", "k")], cut


def test_a_5mb_paste_is_not_read_character_by_character(monkeypatch):
    given: list[int] = []
    original = XTermParser.feed

    def counting(self, data):
        given.append(len(data))
        return original(self, data)

    monkeypatch.setattr(XTermParser, "feed", counting)
    text = "".join(f"log line {n:06d}: the service answered slowly, retrying in a moment\n" for n in range(75_000))
    stream = f"{PASTE_START}{text}{PASTE_END}ok"
    parser = BulkPasteParser()
    events_seen = parsed(parser, [stream[i : i + 65536] for i in range(0, len(stream), 65536)])
    assert events_seen == [("paste", text), ("key", "o"), ("key", "k")]
    assert sum(given) < 10  # only the two keys after it went through Textual's parser


def test_the_app_reads_the_terminal_through_the_bulk_paste_driver(project, home):
    from agent_repl.ui.app import AgentApp
    from agent_repl.ui.paste_input import BulkPasteDriver

    from .conftest import StaticLauncher, fixed_session

    app = AgentApp(StaticLauncher(fixed_session([], cwd=project, home=home)), animate=False, warm_client=False)
    assert app.driver_class is BulkPasteDriver
