"""What users reach for at once, in a real terminal: `@path` attaches a file, `!command` runs one
and the model sees both; /init asks the model for an AGENTS.md; /status says what runs."""

from __future__ import annotations

import json

from .tmux import TmuxBed

READY = "/help lists commands"


def _last_request_text(tmux_bed: TmuxBed) -> str:
    [*_, last] = [e for e in tmux_bed.server.recordings.messages if e.status == 200]
    return json.dumps(last.body)


def test_at_path_attaches_the_file_and_bang_runs_a_command_for_the_model(tmux_bed: TmuxBed):
    tmux_bed.script([{"text": "I see the readme."}, {"text": "I see what echo said."}])
    project = tmux_bed.project()
    (project / "notes.txt").write_text("the secret word is pelican\n")
    term = tmux_bed.start(project=project)
    term.wait_for(READY)
    term.type("what does @notes.txt say?")
    term.wait_for("I see the readme.")
    term.wait_for("attached @notes.txt")
    assert "the secret word is pelican" in _last_request_text(tmux_bed)

    term.type("!echo shell-said-hi")
    term.wait_for("! echo shell-said-hi")
    term.wait_for("shell-said-hi ")  # the output under the command
    term.type("and that?")
    term.wait_for("I see what echo said.")
    sent = _last_request_text(tmux_bed)
    assert "<bash-input>echo shell-said-hi</bash-input>" in sent and "<bash-stdout>shell-said-hi" in sent


def test_bang_runs_a_command_in_the_inline_repl_too(tmux_bed: TmuxBed):
    tmux_bed.script([{"text": "unused"}])
    term = tmux_bed.start("--inline")
    term.wait_for_inline_prompt()
    term.type("!echo inline-shell-ok")
    term.wait_for_count("inline-shell-ok", 2)  # the line typed, then the output
    [records] = term.transcripts()
    texts = [r["message"]["content"] for r in records if r.get("type") == "user"]
    assert "<bash-input>echo inline-shell-ok</bash-input>" in texts


def test_init_asks_the_model_and_status_names_the_session(tmux_bed: TmuxBed):
    tmux_bed.script([{"text": "Here is an AGENTS.md plan."}])
    term = tmux_bed.start()
    term.wait_for(READY)
    term.type("/init")
    term.wait_for("Here is an AGENTS.md plan.")
    assert "Write an AGENTS.md file" in _last_request_text(tmux_bed)
    term.type("/status")
    screen = term.wait_for("memory files")
    [records] = term.transcripts()
    assert records[-1]["sessionId"] in screen.replace("\n", "")
