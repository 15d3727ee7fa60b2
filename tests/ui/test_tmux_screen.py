"""What the screen shows, in a real terminal: tool headers, the compact divider, and text that tries
to act on the terminal (escape sequences from a command or its output are shown, never obeyed)."""

from __future__ import annotations

from pathlib import Path

import pytest

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
    term.wait_for("/uncompact takes it back")  # the command is done: the app is idle again
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


# The tool's bytes as they would reach the terminal if its output leaked through unescaped.
LEAKED = b"before\x1b[2J\x1b[Hafter"


def test_clear_screen_in_tool_output_does_not_wipe_the_app(tmux_bed: TmuxBed, tmp_path: Path):
    tmux_bed.script([bash("printf 'before\\033[2J\\033[Hafter\\n'"), {"text": "Printed it."}])
    term = tmux_bed.start("--allowed-tools", "Bash(printf:*)")
    term.record_output(tmp_path / "terminal.bin")
    term.wait_for(READY)
    term.type("print something odd")
    term.wait_for("Printed it.")
    # The output's escapes shown, and the prompt, the input box and the status line still there.
    # One capture can land mid-repaint, so wait for a screen that has them all (a real wipe never
    # gets there, and fails).
    term.wait_until(
        lambda s: all(part in unwrapped(s) for part in ("before␛[2J␛[Hafter", "› print something odd", "claude-"))
        and any(line.lstrip().startswith("╭") for line in s.splitlines()),
        "the escapes shown with the app whole around them",
    )
    # What settles a wipe from a slow repaint: the escape never reached the terminal.
    assert LEAKED not in (tmp_path / "terminal.bin").read_bytes()


def test_clear_screen_in_tool_output_does_not_wipe_the_inline_repl(tmux_bed: TmuxBed, tmp_path: Path):
    tmux_bed.script([bash("printf 'before\\033[2J\\033[Hafter\\n'"), {"text": "Printed it inline."}])
    term = tmux_bed.start("--inline", "--allowed-tools", "Bash(printf:*)")
    term.record_output(tmp_path / "terminal.bin")
    term.wait_for(INLINE_READY)
    term.type("print something odd")
    term.wait_for("Printed it inline.")
    screen = term.wait_for("before␛[2J␛[Hafter")
    assert "print something odd" in screen and INLINE_READY in unwrapped(screen)
    assert LEAKED not in (tmp_path / "terminal.bin").read_bytes()


SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "claude_code"
VIEWER = SHARED / "claude_code_viewer" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
WSD = SHARED / "phantom_reads" / "wsd-dev-repeat_2.1.6-bad" / "504216d1-8285-4ec4-92be-0db8dc92a18a.jsonl"
BAREBONES = SHARED / "phantom_reads" / "barebones-2122_20260128-152044" / "f28e368b-423a-4989-a7b9-33d64ce6da47.jsonl"


def _first_lines(source: Path, count: int, target: Path) -> Path:
    """The start of a real session (a prefix of a transcript is a transcript)."""
    target.write_text("".join(source.read_text().splitlines(keepends=True)[:count]))
    return target


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"the shared Claude Code sessions are not at {SHARED}")
def test_resumed_claude_code_sessions_read_as_claude_code_shows_them(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    # Up to the second TodoWrite, where every call has its result: a slash command, tasks, checklists.
    todos = _first_lines(VIEWER, 225, project / "todos.jsonl")
    term = tmux_bed.start("--resume", str(todos), project=project, rows=60)
    for shown in (
        "◐ Implementing state management and CRUD operations",  # TodoWrite as a checklist
        "☒ Set up Next.js project structure and dependencies",
        "› /orchestrator create TODO app by Next.js",  # the slash command as typed
        "Task(Setup Next.js project) Done (33 tool uses · 41,466 tokens · 174.7s)",
    ):
        term.wait_for(shown)
    term.wait_until(
        lambda s: "Task(Setup Next.js project)" in s and "<command-" not in s and '"todos"' not in s,
        "the session drawn without its raw markup",
    )

    # An api_error record (no text in it) and an Edit whose toolUseResult has the structuredPatch.
    term.submit(f"/resume {_first_lines(WSD, 25, project / 'edit.jsonl')}")
    term.wait_for("API error, retry 1 of 10 in 0.6s")
    term.wait_for("+ **Custom Workscope** - `/wsd:init --custom` was invoked.")  # the Edit as a diff

    # /context's output as it printed it (its colour codes), then /export and /exit with theirs.
    term.submit(f"/resume {_first_lines(WSD, 60, project / 'context.jsonl')}")
    # The status line can change before the old session's lines are repainted: wait for the new view,
    # settled with /resume's own note below the end of the /context output (its first lines, taller
    # than the screen, are above it then: a check on them passed only while a frame before the note
    # was on screen, and failed a soak's run that read the screen later).
    term.wait_until(
        lambda s: "Free space: 71k (35.6%)" in unwrapped(s)
        and "└ open-ticket: 6 tokens" in s
        and "resumed session" in s
        and "␛" not in s
        and "local-command" not in s,
        "/context's output without escapes or its wrapper tags",
    )
    term.submit(f"/resume {BAREBONES}")
    term.wait_for("Catch you later!")
    term.wait_for("Conversation exported to: ../cc-exports/20260128-152044.txt")
    term.wait_until(
        lambda s: "/export ../cc-exports/20260128-152044.txt" in unwrapped(s) and "/exit" in s,
        "/export and /exit as typed",
    )
