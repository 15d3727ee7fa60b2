"""Sonnet 5.5's progress notes on screen, in a real terminal: the notes the model writes between tool
calls show dimmed, each before the call it led to, in the full-screen app and in `--inline`; a long
thought is folded to its first lines and opens with Enter (or a click)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from .tmux import Terminal, TmuxBed, tmux, unwrapped

READY = "/help lists commands"
INLINE_READY = "/help for help"
NOTES = ["Looking at the layout first.", "Now the readme itself.", "One last look for tests."]
# SGR parameters that turn on dim (2) or italic (3), as tmux reports them.
_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def steps() -> list[dict]:
    patterns = ["*", "README.md", "tests/**"]
    return [
        {"text": note, "tools": [{"name": "Glob", "input": {"pattern": pattern}}]}
        for note, pattern in zip(NOTES, patterns, strict=True)
    ] + [{"text": "Checked all three."}]


def styled_screen(name: str) -> str:
    """The pane with its colours and attributes as escape sequences."""
    return tmux("capture-pane", "-p", "-e", "-t", name).stdout


def settled_styled_screen(term: Terminal, condition: Callable[[str], bool], timeout: float = 15.0) -> str:
    """The styled pane once the turn has ended and `condition` holds (or the last one captured at
    the timeout): a capture taken while the app repaints can hold half of two frames (seen under a
    soak's load: the first note drawn over the prompt's row)."""
    term.wait_until_gone("esc to interrupt")
    deadline = time.monotonic() + timeout
    while True:
        styled = styled_screen(term.name)
        if condition(styled) or time.monotonic() > deadline:
            return styled
        time.sleep(0.1)


def _attributes(codes: list[str]) -> set[str]:
    """The SGR attributes among `codes`, colour arguments (after 38 or 48) left out."""
    found: set[str] = set()
    index = 0
    while index < len(codes):
        code = codes[index]
        if code in ("38", "48"):
            index += 3 if index + 1 < len(codes) and codes[index + 1] == "5" else 5
            continue
        if code in ("0", ""):
            found.clear()
        else:
            found.add(code)
        index += 1
    return found


def is_dimmed(screen: str, text: str) -> bool:
    """Whether `text` is drawn dim (2) or italic (3), as the line's escapes before it say."""
    for line in screen.splitlines():
        if text not in _SGR.sub("", line) or text not in line:
            continue
        before = line[: line.index(text)]
        codes = [code for match in _SGR.finditer(before) for code in match.group(1).split(";")]
        return bool(_attributes(codes) & {"2", "3"})
    return False


def in_order(screen: str, *texts: str) -> bool:
    """Whether the texts appear on the screen one after the other."""
    flat, start = unwrapped(screen), 0
    for text in texts:
        found = flat.find(text, start)
        if found < 0:
            return False
        start = found + len(text)
    return True


def test_three_notes_show_dimmed_between_the_tool_calls_in_the_app(tmux_bed: TmuxBed):
    tmux_bed.script(steps())
    term = tmux_bed.start()
    term.wait_for(READY)
    term.submit("look around")
    screen = term.wait_for("Checked all three.")
    assert in_order(screen, NOTES[0], "Glob", NOTES[1], "Glob", NOTES[2], "Glob", "Checked all three.")
    styled = settled_styled_screen(term, lambda styled: all(is_dimmed(styled, note) for note in NOTES))
    assert all(is_dimmed(styled, note) for note in NOTES), styled
    assert not is_dimmed(styled, "Checked all three.")


def test_three_notes_print_dimmed_in_the_inline_repl(tmux_bed: TmuxBed):
    tmux_bed.script(steps())
    term = tmux_bed.start("--inline")
    term.wait_for(INLINE_READY)
    term.type("look around")
    term.wait_for("Checked all three.")
    screen = term.wait_for_inline_prompt()
    assert in_order(screen, NOTES[0], "Glob", NOTES[1], "Glob", NOTES[2], "Glob", "Checked all three.")
    assert all(f"✻ {note}" in screen for note in NOTES)
    styled = styled_screen(term.name)
    assert all(is_dimmed(styled, note) for note in NOTES), styled


def test_a_long_thought_is_folded_until_clicked(tmux_bed: TmuxBed):
    thought = "\n".join(f"step {n} of the plan" for n in range(1, 8))
    tmux_bed.script([{"thinking": thought, "text": "Planned."}])
    term = tmux_bed.start()
    term.wait_for(READY)
    term.submit("plan it")
    # The folded thought's first lines may reach the screen a frame after the answer (seen under
    # a soak's load: "Planned." shown, the thought's lines not yet).
    screen = term.wait_until(
        lambda s: "Planned." in s and "step 3 of the plan" in s, "the answer and the thought"
    )
    assert "step 7 of the plan" not in screen
    assert "+4 lines (click or Enter to open)" in screen
    term.keys("Tab", "Tab", "Enter")  # the conversation, then the thought; Enter opens it
    screen = term.wait_for("step 7 of the plan")
    assert "(click or Enter to fold)" in screen
    term.keys("Enter")
    term.wait_until_gone("step 7 of the plan")
