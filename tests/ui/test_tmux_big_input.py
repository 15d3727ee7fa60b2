"""Big input in a real terminal: a 5 MB paste goes as a saved file with a preview while the input
keeps a one-line placeholder (so each key stays cheap), /rewind gives it back as that placeholder;
an @-mentioned 5 MB file goes as its path; a prompt the API refuses as too long leaves the session
usable."""

from __future__ import annotations

from pathlib import Path

from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

from .tmux import TmuxBed, input_box, open_terminal, unwrapped

READY = "/help lists commands"
LINES = 75_000


def five_megabytes(path: Path) -> str:
    text = "".join(f"log line {n:06d}: the service answered slowly, retrying in a moment\n" for n in range(LINES))
    path.write_text(text)
    assert len(text) > 5_000_000
    return text


def sent_prompts(server: EmulatorServer) -> list[str]:
    """The text of the last user message of each request the model answered."""
    prompts = []
    for exchange in server.recordings.messages:
        if exchange.status != 200:
            continue
        content = exchange.body["messages"][-1]["content"]
        prompts.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
    return prompts


def test_a_5mb_paste_stays_a_placeholder_goes_as_a_file_and_rewinds_as_the_placeholder(tmux_bed: TmuxBed, tmp_path):
    tmux_bed.script([{"text": "Read the start of the log."}, {"text": "Still with you."}, {"text": "Read it again."}])
    paste = five_megabytes(tmp_path / "paste.txt")
    term = tmux_bed.start()
    term.wait_for(READY)
    term.paste_file(tmp_path / "paste.txt")
    placeholder = f"[Pasted text #1 +{LINES:,} lines]"
    term.wait_until(lambda s: input_box(s) == placeholder, "the placeholder alone in the input", timeout=120)
    # Keys typed after it echo into a one-line input: the 75,000 lines are not in the widget.
    term.write(" what went wrong?")
    screen = term.wait_until(lambda s: input_box(s) == f"{placeholder} what went wrong?", "the typed words")
    assert "log line 000001" not in screen
    term.keys("Enter")
    term.wait_for("Read the start of the log.", timeout=120)
    [sent] = sent_prompts(tmux_bed.server)
    assert len(sent) < 20_000 and "saved in full at" in sent and "log line 000000" in sent
    saved = Path(sent.split("saved in full at ", 1)[1].split(" (use the Read tool", 1)[0])
    assert saved.read_text() == paste + " what went wrong?"

    term.submit("and now?")
    term.wait_for("Still with you.")
    assert sent_prompts(tmux_bed.server)[-1].startswith("and now?")

    # /rewind to the paste: it comes back as its placeholder, not as 75,000 lines in the input.
    [records] = term.transcripts()
    [pasted] = [r["uuid"] for r in records if r.get("type") == "user" and "saved in full at" in str(r["message"])]
    term.submit(f"/rewind {pasted} conversation")  # what the picker sends for the first prompt
    # The whole prompt comes back as one paste: the lines pasted and the line typed after them.
    again = f"[Pasted text #1 +{LINES + 1:,} lines]"
    term.wait_until(lambda s: input_box(s) == again, "the prompt back as a placeholder", timeout=60)
    term.keys("Enter")  # sent again: the same text, again as a file
    term.wait_for("Read it again.", timeout=120)
    again_sent = sent_prompts(tmux_bed.server)[-1]
    assert len(again_sent) < 20_000 and "saved in full at" in again_sent
    resaved = Path(again_sent.split("saved in full at ", 1)[1].split(" (use the Read tool", 1)[0])
    assert resaved != saved and resaved.read_text() == saved.read_text()


def test_an_at_mention_of_a_5mb_file_sends_its_path_not_its_text_and_the_session_goes_on(tmux_bed: TmuxBed):
    tmux_bed.script([{"text": "Looked at the file."}, {"text": "Next answer."}])
    project = tmux_bed.project()
    five_megabytes(project / "big.log")
    term = tmux_bed.start(project=project)
    term.wait_for(READY)
    term.submit("what is in @big.log")
    term.wait_for("Looked at the file.", timeout=120)
    # The model gets the file's path and how to read it in parts (Read's own limit), not 5 MB.
    body = str(tmux_bed.server.recordings.messages[-1].body)
    assert len(body) < 50_000 and str(project / "big.log") in body and "Read a smaller part" in body
    term.submit("and now?")
    term.wait_for("Next answer.")


def test_a_prompt_the_api_refuses_as_too_long_leaves_the_session_usable(tmp_path):
    # The API's window (20K) is smaller than the one configured (200K): a 30K-token paste passes
    # the attachment check, and the API refuses it.
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": [{"text": f"answer {n}"} for n in range(6)]}), context_window=20_000
    ).start()
    project = tmp_path / "project"
    project.mkdir()
    paste = tmp_path / "paste.txt"
    paste.write_text("".join(f"row {n}: some words in a line\n" for n in range(3_500)))
    term = open_terminal(server.base_url, tmp_path / "home", project, env={"AGENT_REPL_CONTEXT_WINDOW": "200000"})
    try:
        term.wait_for(READY)
        for attempt in range(3):
            term.paste_file(paste)
            term.wait_until(lambda s: input_box(s) == "[Pasted text #1 +3,500 lines]", "the placeholder")
            refused = sum(e.status == 400 for e in server.recordings.messages)
            term.keys("Enter")
            term.wait_until(
                lambda s, refused=refused: sum(e.status == 400 for e in server.recordings.messages) > refused
                and "left out of the conversation" in unwrapped(s)
                and input_box(s) == "",
                "the refusal explained",
                timeout=120,
            )
            term.submit(f"short question {attempt}")
            term.wait_for(f"answer {attempt}", timeout=60)
        screen = term.screen()
        assert "Automatic compaction failed" not in unwrapped(screen)
        assert "prompt is too long" in unwrapped(screen)
    finally:
        term.close()
        server.stop()
