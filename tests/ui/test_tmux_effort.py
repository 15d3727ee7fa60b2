"""`/effort` in a real terminal: the level is shown, sent on the wire as `output_config.effort`, saved
for the model as the default of the next session (max only for the session), and `auto` goes back
to sending none."""

from __future__ import annotations

import json

from .tmux import TmuxBed

READY = "/help lists commands"


def efforts_sent(bed: TmuxBed) -> list[object]:
    return [(e.body.get("output_config") or {}).get("effort") for e in bed.server.recordings.messages if e.status == 200]


def test_effort_is_shown_sent_saved_and_read_by_the_next_session(tmux_bed: TmuxBed):
    tmux_bed.script([{"text": "First answer."}, {"text": "Second answer."}, {"text": "Third answer."}])
    tmux_bed.server.recordings.clear()
    settings_file = tmux_bed.home / "settings.json"
    settings_file.unlink(missing_ok=True)
    project = tmux_bed.project()

    term = tmux_bed.start(project=project)
    term.wait_for(READY)
    term.submit("/effort")
    term.wait_for("effort: the API's default (none sent)")
    term.submit("/effort low")
    term.wait_for("effort: low, saved as the default for claude-sonnet-5-5")
    term.wait_for("claude-sonnet-5-5 · low effort")  # the status line names it
    term.submit("hello")
    term.wait_for("First answer.")
    term.submit("/effort max")
    term.wait_for("effort: max for this session only (not saved)")
    term.submit("again")
    term.wait_for("Second answer.")
    assert efforts_sent(tmux_bed) == ["low", "max"]
    assert json.loads(settings_file.read_text())["model_effort"] == {"claude-sonnet-5-5": "low"}
    term.submit("/exit")
    term.wait_exit()

    # The next session starts with the saved level; /effort auto sends none and forgets it.
    term = tmux_bed.start(project=project)
    term.wait_for(READY)
    term.wait_for("claude-sonnet-5-5 · low effort")
    term.submit("/effort")
    term.wait_for("effort: low (saved for claude-sonnet-5-5")
    term.submit("/effort auto")
    term.wait_for("the level saved for claude-sonnet-5-5 is forgotten")
    term.wait_until_gone("low effort")
    term.submit("third")
    term.wait_for("Third answer.")
    assert efforts_sent(tmux_bed) == ["low", "max", None]
    assert "model_effort" not in json.loads(settings_file.read_text())
