"""The first minutes in a real terminal: leaving, interrupting, coming back, typing and pasting.

Each test types into `agent-repl` running in tmux, as a person would, and reads the screen.
"""

from __future__ import annotations

import sys

from .tmux import COLUMNS, Terminal, TmuxBed, input_box, unwrapped

READY = "/help lists commands"
INLINE_READY = "/help for help"
SLEEP = {"tools": [{"name": "Bash", "input": {"command": "sleep 30"}}]}


def session_id(term: Terminal) -> str:
    """The id of the terminal's project's first session."""
    records = term.transcripts()[0]
    return next(r["sessionId"] for r in records if r.get("sessionId"))


def test_exit_leaves_at_once_and_prints_the_line_that_resumes(tmux_bed: TmuxBed):
    tmux_bed.script([{"text": "Hello from the model."}])
    term = tmux_bed.start()
    term.wait_for(READY)
    term.type("hi")
    term.wait_for("Hello from the model.")
    term.type("/exit")
    code, _ = term.wait_exit()
    assert code == 0
    # The terminal runs `python -m agent_repl`, so the hint names that command (see resume_hint).
    # The line may wrap anywhere in a long checkout path or the id, so spaces are left out of both sides.
    expected = f"{sys.executable} -m agent_repl --resume {session_id(term)}"
    assert "".join(expected.split()) in "".join(unwrapped(term.screen()).split())


def test_ctrl_d_leaves_the_app_after_a_turn(tmux_bed: TmuxBed):
    tmux_bed.script([{"text": "Answered."}])
    term = tmux_bed.start()
    term.wait_for(READY)
    term.type("a question")
    term.wait_for("Answered.")
    term.keys("C-d")
    code, _ = term.wait_exit()
    assert code == 0


def test_ctrl_c_twice_during_a_turn_interrupts_it_and_keeps_the_app(tmux_bed: TmuxBed):
    tmux_bed.script([SLEEP, {"text": "Still here after the interruption."}])
    term = tmux_bed.start("--allowed-tools", "Bash(sleep:*)")
    term.wait_for(READY)
    term.type("run something slow")
    term.wait_for("Bash(sleep 30)")
    term.keys("C-c", "C-c")  # a Claude Code user's hands, stopping a runaway command
    term.wait_for("interrupted")
    term.type("are you there?")
    term.wait_for("Still here after the interruption.")
    assert "AGENT-REPL-EXIT" not in term.screen()
    # On an idle prompt, Ctrl+C twice leaves.
    term.keys("C-c", "C-c")
    code, _ = term.wait_exit()
    assert code == 0


def test_esc_and_ctrl_c_interrupt_a_turn_in_the_inline_repl(tmux_bed: TmuxBed):
    tmux_bed.script([SLEEP, SLEEP, {"text": "Inline still answers."}])
    term = tmux_bed.start("--inline", "--allowed-tools", "Bash(sleep:*)")
    term.wait_for(INLINE_READY)
    term.type("first slow one")
    term.wait_for("Bash(sleep 30)")
    term.keys("Escape")
    term.wait_for("interrupted")
    term.type("second slow one")
    term.wait_for_count("Bash(sleep 30)", 2)
    term.keys("C-c")
    term.wait_for_count("interrupted", 4)  # each turn: the tool's "⎿ … interrupted" and the notice
    term.type("hello")
    screen = term.wait_for("Inline still answers.")
    assert "^[" not in screen and "^C" not in screen
    term.keys("C-d")
    code, _ = term.wait_exit()
    assert code == 0


def test_the_short_id_on_screen_resumes_the_session(tmux_bed: TmuxBed):
    tmux_bed.script([{"text": "Noted: pelican."}, {"text": "Back again."}])
    project = tmux_bed.project()
    first = tmux_bed.start(project=project)
    first.wait_for(READY)
    first.type("remember the word pelican")
    first.wait_for("Noted: pelican.")
    short = session_id(first)[:8]
    first.wait_for(short)  # the status line names the session by its first 8 characters
    first.keys("C-d")
    first.wait_exit()

    second = tmux_bed.start("--resume", short, project=project)
    second.wait_for("remember the word pelican")  # the history is back
    second.type("/clear")
    second.wait_for("new session")
    second.type(f"/resume {short}")
    second.wait_for(f"resumed session {short}")


def test_typing_while_the_conversation_has_focus_goes_to_the_input(tmux_bed: TmuxBed):
    tmux_bed.script([{"text": "First answer."}, {"text": "Typed after Tab."}, {"text": "Typed after Esc."}])
    term = tmux_bed.start()
    term.wait_for(READY)
    term.type("one")
    term.wait_for("First answer.")
    term.keys("Tab")  # the empty input hands the focus to the conversation
    term.type("two")
    term.wait_for("Typed after Tab.")
    assert "› two" in unwrapped(term.screen())
    term.keys("Tab", "Escape")  # Esc brings the focus back
    term.type("three")
    term.wait_for("Typed after Esc.")
    assert "› three" in unwrapped(term.screen())


def test_a_whitespace_prompt_is_cleared_and_a_long_paste_collapses(tmux_bed: TmuxBed):
    tmux_bed.script([{"text": "Got the paste."}])
    term = tmux_bed.start()
    term.wait_for(READY)
    term.type("   ")
    term.write("zq9")
    screen = term.wait_for("zq9")
    assert input_box(screen) == "zq9", input_box(screen)
    term.keys("BSpace", "BSpace", "BSpace")
    pasted = "\n".join(f"pasted line {n}" for n in range(1, 61))
    term.paste(pasted)
    screen = term.wait_for("[Pasted text #1 +60 lines]")
    assert "pasted line 1" not in screen
    term.keys("Enter")
    term.wait_for("Got the paste.")
    [records] = term.transcripts()
    assert pasted in [r["message"]["content"] for r in records if r["type"] == "user"]


def test_a_long_paste_collapses_in_the_inline_repl(tmux_bed: TmuxBed):
    tmux_bed.script([{"text": "Inline got the paste."}])
    term = tmux_bed.start("--inline")
    term.wait_for_inline_prompt()  # bracketed paste is on only while the prompt reads
    pasted = "\n".join(f"inline line {n}" for n in range(1, 41))
    term.paste(pasted)
    screen = term.wait_for("[Pasted text #1 +40 lines]")
    assert "inline line 2" not in screen
    term.keys("Enter")
    term.wait_for("Inline got the paste.")
    [records] = term.transcripts()
    assert pasted in [r["message"]["content"] for r in records if r["type"] == "user"]


def test_an_exported_columns_does_not_pin_the_apps_size(tmux_bed: TmuxBed):
    tmux_bed.script([{"text": "Sized."}])
    term = tmux_bed.start(env={"COLUMNS": "80", "LINES": "24"})
    term.wait_for(READY)
    box_top = next(line for line in term.screen().splitlines() if line.startswith("╭"))
    assert len(box_top) == COLUMNS, box_top  # the pane's width, not the variable's
    term.keys("C-d")
    code, _ = term.wait_exit()
    assert code == 0
