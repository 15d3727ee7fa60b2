"""What the screen shows, in a real terminal: tool headers, the compact divider, and text that tries
to act on the terminal (escape sequences from a command or its output are shown, never obeyed)."""

from __future__ import annotations

from .tmux import TmuxBed, unwrapped

READY = "/help lists commands"
INLINE_READY = "/help for help"


def bash(command: str) -> dict:
    return {"tools": [{"name": "Bash", "input": {"command": command}}]}


def test_a_bracket_in_a_tool_call_leaves_no_stray_markup(tmux_bed: TmuxBed):
    # An unmatched `[` (or a trailing backslash) once broke the header's markup.
    tmux_bed.script([bash('echo "[ opens a list" C:\\'), {"text": "Echoed it."}])
    term = tmux_bed.start("--allowed-tools", "Bash(echo:*)")
    term.wait_for(READY)
    term.type("echo a bracket")
    screen = term.wait_for("Echoed it.")
    assert 'Bash(echo "[ opens a list" C:\\)' in screen
    assert "[/]" not in screen


def test_the_divider_shows_the_summary_right_after_compact(tmux_bed: TmuxBed):
    tmux_bed.script([{"text": "Noted the plan."}])
    term = tmux_bed.start()
    term.wait_for(READY)
    term.type("the plan is to paint the shed")
    term.wait_for("Noted the plan.")
    term.type("/compact")
    term.wait_for("conversation compacted")
    term.keys("Tab", "Tab", "Enter")  # the conversation, then the divider; Enter opens it
    screen = term.wait_for("All User Messages")
    assert "no summary recorded" not in screen
    assert "the plan is to paint the shed" in unwrapped(screen)


def test_an_escape_in_a_command_is_shown_in_the_dialog_and_nothing_runs(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    (project / "victim").write_text("keep me\n")
    command = "ls -la; rm -f victim #\x1bcAllow Bash: ls -la"
    tmux_bed.script([bash(command), {"text": "Understood, not run."}])
    term = tmux_bed.start(project=project)
    term.wait_for(READY)
    term.type("list the files")
    screen = term.wait_for("Allow Bash?")
    # The whole command, with the escape visible; the fake "Allow Bash: ls -la" cannot pass for the dialog.
    assert "ls -la; rm -f victim #␛cAllow Bash: ls -la" in unwrapped(screen)
    term.keys("n")
    term.wait_for("Understood, not run.")
    assert (project / "victim").read_text() == "keep me\n"


def test_clear_screen_in_tool_output_does_not_wipe_the_app(tmux_bed: TmuxBed):
    tmux_bed.script([bash("printf 'before\\033[2J\\033[Hafter\\n'"), {"text": "Printed it."}])
    term = tmux_bed.start("--allowed-tools", "Bash(printf:*)")
    term.wait_for(READY)
    term.type("print something odd")
    screen = term.wait_for("Printed it.")
    assert "› print something odd" in unwrapped(screen)
    assert "before␛[2J␛[Hafter" in screen


def test_clear_screen_in_tool_output_does_not_wipe_the_inline_repl(tmux_bed: TmuxBed):
    tmux_bed.script([bash("printf 'before\\033[2J\\033[Hafter\\n'"), {"text": "Printed it inline."}])
    term = tmux_bed.start("--inline", "--allowed-tools", "Bash(printf:*)")
    term.wait_for(INLINE_READY)
    term.type("print something odd")
    screen = term.wait_for("Printed it inline.")
    assert "print something odd" in screen and INLINE_READY in unwrapped(screen)
    assert "before␛[2J␛[Hafter" in screen
