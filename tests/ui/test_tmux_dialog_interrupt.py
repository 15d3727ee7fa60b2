"""Esc or Ctrl+C with a permission question open: the call is refused and the turn stops at once,
in the full-screen app and `--inline` alike; the prompt comes back and the next one is answered."""

from __future__ import annotations

import pytest

from .tmux import TmuxBed, input_box, unwrapped

MODES = {"app": ("/help lists commands", "Allow Bash?"), "inline": ("/help for help", "[n] deny >")}


@pytest.mark.parametrize("key", ["Escape", "C-c"])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_esc_or_ctrl_c_in_a_permission_question_refuses_and_stops_the_turn(tmux_bed: TmuxBed, mode: str, key: str):
    ready, question = MODES[mode]
    project = tmux_bed.project()
    tmux_bed.script(
        [
            {"tools": [{"name": "Bash", "input": {"command": "touch made-it", "description": "Make a file"}}]},
            {"text": "Fresh answer to the new prompt."},
        ]
    )
    term = tmux_bed.start(*(["--inline"] if mode == "inline" else []), project=project)
    term.wait_for(ready)
    term.type("make the file")
    term.wait_for(question)
    term.keys(key)
    if mode == "app":
        # The dialog is gone, the turn is over (no spinner, no "Interrupting"), the input is live.
        screen = term.wait_until(
            lambda s: "Allow Bash?" not in s and "rejected: Bash" in unwrapped(s) and "esc to interrupt" not in s,
            "the dialog taken down and the turn stopped",
        )
        assert "Interrupting" not in screen
        term.submit("and now?")
    else:
        term.wait_for("no, and the turn stops")
        term.wait_for_inline_prompt()
        term.type("and now?")
    screen = term.wait_for("Fresh answer to the new prompt.")
    assert "Interrupting" not in screen
    assert not (project / "made-it").exists()
    if mode == "app":
        assert input_box(term.wait_for(ready)) == ""
