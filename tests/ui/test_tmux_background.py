"""Background commands, /bashes and /export in a real terminal: a background `sleep` polled with
BashOutput and killed with KillShell, Ctrl+B moving a running command, the session's end killing
what still runs, and the conversation exported as Markdown."""

from __future__ import annotations

from pathlib import Path

from .tmux import TmuxBed, tmux, unwrapped

READY = "/help lists commands"
ALLOW = ("--allowed-tools", "Bash")


def _tool_results(records: list[dict]) -> dict[str, str]:
    """Each tool call's name and its result's text, from the transcript."""
    names = {b["id"]: b["name"] for r in records if r["type"] == "assistant"
             for b in r["message"]["content"] if b.get("type") == "tool_use"}
    results = {}
    for r in records:
        content = r["message"]["content"] if r["type"] == "user" else None
        for b in content if isinstance(content, list) else []:
            if b.get("type") == "tool_result":
                results.setdefault(names[b["tool_use_id"]], "")
                results[names[b["tool_use_id"]]] += str(b["content"]) + "\n"
    return results


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def test_a_background_sleep_is_polled_and_killed_and_bashes_lists_it(tmux_bed: TmuxBed):
    tmux_bed.script([
        {"tools": [{"name": "Bash", "input": {"command": "echo tick; sleep 30", "description": "Tick then sleep",
                                               "run_in_background": True}}]},
        {"tools": [{"name": "Bash", "input": {"command": "sleep 0.5"}}]},
        {"tools": [{"name": "BashOutput", "input": {"bash_id": "bash_1"}}]},
        {"tools": [{"name": "KillShell", "input": {"shell_id": "bash_1"}}]},
        {"text": "Polled and stopped the sleeper."},
    ])
    term = tmux_bed.start(*ALLOW)
    term.wait_for(READY)
    term.type("start a sleeper in the background, read it, stop it")
    # The headlines the tools declare (the summary's words are checked in tests/tools: a block's title
    # is sometimes left cut to the width of its "running…" placeholder on screen).
    parts = ("Polled and stopped the sleeper.", "BashOutput(bash_1) running", "KillShell(bash_1) Killed")
    term.wait_until(lambda s: all(p in unwrapped(s) for p in parts), "the calls and the answer on the screen")
    term.submit("/bashes")
    screen = unwrapped(term.wait_for("bash_1 [killed"))
    assert "echo tick; sleep 30" in screen
    term.type("/exit")
    code, _ = term.wait_exit(20)
    assert code == 0
    (records,) = term.transcripts()
    results = _tool_results(records)
    assert "Command running in background with ID: bash_1" in results["Bash"]
    assert "<status>running</status>" in results["BashOutput"] and "tick" in results["BashOutput"]
    assert "Killed background shell bash_1" in results["KillShell"]


def test_ctrl_b_backgrounds_a_running_command_and_the_exit_kills_it(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    tmux_bed.script([
        {"tools": [{"name": "Bash", "input": {"command": "echo $$ > shell.pid; echo started; sleep 60"}}]},
        {"text": "It goes on in the background."},
    ])
    term = tmux_bed.start(*ALLOW, project=project)
    term.wait_for(READY)
    term.type("run the slow one")
    term.wait_for("started")
    term.keys("C-b")
    term.wait_for("It goes on in the background.")
    term.submit("/bashes")
    screen = unwrapped(term.wait_for("bash_1 [running]"))
    assert "sleep 60" in screen
    pid = int((project / "shell.pid").read_text())
    assert not _gone(pid)
    term.type("/exit")
    code, _ = term.wait_exit(20)
    assert code == 0
    assert _gone(pid), "the session's end killed the background command"
    (records,) = term.transcripts()
    assert "The user moved this command to the background with ID: bash_1" in _tool_results(records)["Bash"]


def test_export_writes_the_session_as_markdown(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    tmux_bed.script([
        {"tools": [{"name": "Read", "input": {"file_path": str(project / "README.md")}}]},
        {"text": "The readme describes **a tiny project**."},
    ])
    term = tmux_bed.start(project=project)
    term.wait_for(READY)
    term.type("what does the readme say?")
    term.wait_for("a tiny project")
    term.submit("/export notes/session.md")
    term.wait_for("Conversation exported: wrote")
    text = (project / "notes" / "session.md").read_text()
    assert "## User\n\nwhat does the readme say?" in text
    assert "**Read**" in text and "A tiny project for terminal tests." in text
    assert "## Assistant\n\nThe readme describes **a tiny project**." in text
    # No file: to the clipboard through OSC 52, which tmux keeps as its newest buffer when allowed.
    tmux("set-option", "-s", "set-clipboard", "on")
    term.submit("/export")
    term.wait_for("Conversation copied to the clipboard")
    assert "## User\n\nwhat does the readme say?" in tmux("show-buffer").stdout
    term.type("/exit")
    code, _ = term.wait_exit(20)
    assert code == 0


def test_ctrl_b_backgrounds_a_running_command_inline(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    tmux_bed.script([
        {"tools": [{"name": "Bash", "input": {"command": "echo started; sleep 60"}}]},
        {"text": "Inline: it goes on in the background."},
    ])
    term = tmux_bed.start("--inline", *ALLOW, project=project)
    term.wait_for("/help for help")
    term.type("run the slow one")
    term.wait_for("Bash(echo started; sleep 60)")
    # The header shows before the process has started; a Ctrl+B that comes first finds nothing to
    # move (CI saw it under load), so press again, as a person would, until the turn goes on.
    for _ in range(20):
        term.keys("C-b")
        try:
            term.wait_for("Inline: it goes on in the background.", timeout=1.5)
            break
        except AssertionError:
            continue
    term.wait_for("Inline: it goes on in the background.")
    term.wait_for_inline_prompt()
    term.type("/bashes")
    term.wait_for("bash_1 [running]")
    term.keys("C-d")
    code, _ = term.wait_exit(20)
    assert code == 0
    (records,) = term.transcripts()
    assert "The user moved this command to the background with ID: bash_1" in _tool_results(records)["Bash"]


def test_add_dir_lets_the_tools_read_there_without_asking(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    other = project.parent / f"{project.name}-other"
    other.mkdir()
    (other / "notes.txt").write_text("notes from the other folder\n")
    tmux_bed.script([
        {"tools": [{"name": "Read", "input": {"file_path": str(other / "notes.txt")}}]},
        {"text": "Read the other folder's notes."},
    ])
    term = tmux_bed.start(project=project)
    term.wait_for(READY)
    term.submit("/add-dir ../nowhere")
    term.wait_for("does not exist")
    term.submit(f"/add-dir ../{other.name}")
    term.wait_for(f"Added {other.resolve()} as a working directory")
    term.type("read the notes over there")
    screen = term.wait_for("Read the other folder's notes.")
    assert "Allow Read" not in screen
    term.type("/exit")
    code, _ = term.wait_exit(20)
    assert code == 0


def test_the_end_of_a_background_command_is_shown_when_the_model_hears_of_it(tmux_bed: TmuxBed):
    tmux_bed.script([
        {"tools": [{"name": "Bash", "input": {"command": "echo quick", "description": "Say quick",
                                               "run_in_background": True}}]},
        {"text": "Started the quick one."},
        {"text": "It has finished."},
    ])
    term = tmux_bed.start(*ALLOW)
    term.wait_for(READY)
    term.type("start a quick one in the background")
    term.wait_for("Started the quick one.")
    term.submit("/bashes")
    term.wait_for("bash_1 [completed, exit code 0]")
    term.type("is it done?")
    screen = unwrapped(term.wait_for("It has finished."))
    assert 'background task bash_1 completed: Background command "Say quick" completed (exit code 0)' in screen
    term.type("/exit")
    code, _ = term.wait_exit(20)
    assert code == 0
