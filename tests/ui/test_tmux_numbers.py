"""The numbers on screen agree, in a real terminal: the status line and /context show one figure and
follow /snip; the session picker and the resumed session count messages alike; /context keeps the
ids /snip needs at 80 columns; an autocompact mid-turn is drawn in order."""

from __future__ import annotations

import re

from agent_repl.ui.widgets.status_line import short_tokens

from .tmux import TmuxBed, unwrapped

READY = "/help lists commands"
_HEADER = re.compile(r"Context \S+ · ([\d,]+) / ([\d,]+) tokens")
_STATUS = re.compile(r"(\d[\d.]*[kM]?)/(\d[\d.]*[kM]?) \(\d+%\)")


def _context_figure(screen: str) -> int:
    """The used tokens in the newest /context header on the screen."""
    return int(_HEADER.findall(unwrapped(screen))[-1][0].replace(",", ""))


def _context_window(screen: str) -> int:
    """The window in the newest /context header on the screen."""
    return int(_HEADER.findall(unwrapped(screen))[-1][1].replace(",", ""))


def _status_match(screen: str) -> re.Match[str]:
    [line] = [line for line in screen.splitlines() if _STATUS.search(line)][-1:]
    match = _STATUS.search(line)
    assert match is not None
    return match


def _status_figure(screen: str) -> str:
    return _status_match(screen).group(1)


def _status_window(screen: str) -> str:
    return _status_match(screen).group(2)


def test_the_status_line_and_context_show_one_figure_and_follow_snip(tmux_bed: TmuxBed):
    tmux_bed.script([{"text": "Noted the long one."}, {"text": "Noted the short one."}])
    term = tmux_bed.start(columns=80)
    term.wait_for(READY)
    term.paste("a long message to snip later: " + "lorem ipsum dolor " * 600)  # typing it would take long
    term.keys("Enter")
    term.wait_for("Noted the long one.")
    term.type("a short one")
    term.wait_for("Noted the short one.")
    term.type("/context")
    screen = term.wait_for("Largest entries in the view")
    before = _context_figure(screen)
    assert _status_figure(screen) == short_tokens(before)
    # Out of the same window, too (it read 980k against /context's 1,000,000).
    assert _status_window(screen) == short_tokens(_context_window(screen))
    # At 80 columns the ids /snip needs are whole: six characters, never cut to "zhr…".
    rows = re.findall(r"│ ([0-9a-z]{6}) +user +[\d,]+ ", screen)
    assert rows, screen
    assert not re.search(r"│ [0-9a-z]{1,5}… ", screen)

    long_id = rows[0]
    term.type(f"/snip {long_id}")
    term.wait_for("Snipped 1 messages")
    term.type("/context")
    screen = term.wait_until(
        lambda s: bool(_HEADER.search(unwrapped(s))) and _context_figure(s) != before, "a new /context figure"
    )
    after = _context_figure(screen)
    assert after < before - 1000, (before, after)
    assert _status_figure(screen) == short_tokens(after)


def test_the_picker_and_the_resumed_session_count_the_same_messages(tmux_bed: TmuxBed):
    tmux_bed.script([{"tools": [{"name": "Read", "input": {"file_path": "README.md"}}]}, {"text": "Read it."}])
    term = tmux_bed.start()
    term.wait_for(READY)
    term.type("read the readme")
    term.wait_for("Read it.")
    term.type("/compact")  # a boundary record: in the history, but not one of its messages
    term.wait_for("conversation compacted")
    term.type("/clear")
    term.wait_for("new session")
    term.type("/resume")
    listed = re.search(r"· (\d+) messages ·", unwrapped(term.wait_for("Resume a session of this project"))).group(1)
    term.keys("Enter")
    resumed = re.search(r"resumed session \w+ \((\d+) messages\)", unwrapped(term.wait_for("resumed session")))
    assert resumed.group(1) == listed


def test_an_autocompact_in_the_middle_of_a_turn_is_drawn_in_order(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    steps = []
    for n in range(8):  # one request after another, each result within the tool-result budget
        (project / f"big{n}.txt").write_text("".join(f"row {i} of file {n}, some words to fill it\n" for i in range(400)))
        steps.append({"tools": [{"name": "Read", "input": {"file_path": str(project / f"big{n}.txt")}}]})
    tmux_bed.script([*steps, {"text": "Reply after the compaction."}])
    term = tmux_bed.start(project=project, env={"AGENT_REPL_CONTEXT_WINDOW": "24000"})
    term.wait_for(READY)
    term.type("read the files one by one")
    lines = term.wait_for("Reply after the compaction.").splitlines()
    divider = next(i for i, line in enumerate(lines) if "conversation compacted" in line)
    reply = next(i for i, line in enumerate(lines) if "Reply after the compaction." in line)
    assert divider < reply
    # The summary sits (collapsed) under its divider, not after the reply as an ordinary message.
    assert "This session is being continued" not in "\n".join(lines)
    assert "compaction undone" not in "\n".join(lines)
