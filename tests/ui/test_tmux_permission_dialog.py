"""The Bash permission dialog in a small real terminal: the whole command is on screen (its risky
tail too) while the answer keys are live, hidden characters are visible, the model's description is
labelled as the model's, and the "always" line names the exact rule it saves. App and `--inline`."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from agent_repl.core.permissions.rules import PermissionPolicy, PermissionRequest

from .tmux import TmuxBed, unwrapped

READY = "/help lists commands"
INLINE_READY = "/help for help"
SMALL = {"columns": 80, "rows": 24}
# Decodes to a command that leaves a marker file: proof the tail ran.
PAYLOAD = base64.b64encode(b"touch PWNED").decode()
TAIL = f'; eval "$(echo {PAYLOAD} | base64 -d)"'


def padded(head: str, filler: str, length: int = 300) -> str:
    """`head`, then `filler` repeated, then the risky tail: `length` characters in all."""
    room = length - len(head) - len(TAIL)
    return head + (filler * room)[:room] + TAIL


def bash(command: str, description: str = "") -> dict:
    return {"tools": [{"name": "Bash", "input": {"command": command, "description": description}}]}


def saved_rules(command: str, project: Path) -> tuple[str, ...]:
    """What the policy offers to save for `command` when nothing allows it yet."""
    policy = PermissionPolicy.from_rules([], [], roots=[project])
    return policy.evaluate(PermissionRequest("Bash", command, cwd=project)).always_rules


def on_one_screen(screen: str, *parts: str) -> bool:
    flat = unwrapped(screen)
    return all(unwrapped(part) in flat for part in parts)


def in_dialog(screen: str) -> str:
    """The text inside the dialog's box (between its `█` sides), as one line."""
    rows = [row[row.index("█") + 1 : row.rindex("█")] for row in screen.splitlines() if row.count("█") >= 2]
    return unwrapped("\n".join(rows))


def test_a_command_padded_with_newlines_shows_its_start_and_eval_tail_before_y_in_the_app(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    command = padded("ls -la", "\n")
    assert len(command) == 300
    tmux_bed.script([bash(command, "List the files"), {"text": "Not run, fine."}])
    term = tmux_bed.start(project=project, **SMALL)
    term.wait_for(READY)
    term.type("list the files")
    term.wait_for("Allow Bash?")
    # While the options (y) are live, the start and the tail are both on the screen, risks named.
    screen = term.wait_until(lambda s: on_one_screen(s, "base64 -d)", "Yes, run it once"), "the tail on screen")
    flat = in_dialog(screen)
    assert "Allow Bash? ls -la <248 blank lines>" in flat
    assert f'; eval "$(echo {PAYLOAD} | base64 -d)"' in flat
    assert "eval runs its arguments as shell code" in flat
    assert "base64 -d decodes" in flat
    assert "the model says: List the files" in flat
    term.keys("n")
    term.wait_for("Not run, fine.")
    assert not (project / "PWNED").exists()


def test_a_command_padded_with_spaces_shows_the_padding_and_the_tail_in_the_app(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    command = padded("ls -la", " ")
    tmux_bed.script([bash(command, "List the files"), {"text": "Not run, fine."}])
    term = tmux_bed.start(project=project, **SMALL)
    term.wait_for(READY)
    term.type("list the files")
    screen = term.wait_until(lambda s: on_one_screen(s, "base64 -d)", "Yes, run it once"), "the tail on screen")
    flat = in_dialog(screen)
    assert "ls -la<249 spaces>; eval" in flat
    assert "eval runs its arguments as shell code" in flat
    term.keys("n")
    term.wait_for("Not run, fine.")
    assert not (project / "PWNED").exists()


def test_a_long_argument_before_the_tail_keeps_the_tail_on_screen_in_the_app(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    command = padded("echo ", "checking-the-build-output-and-the-logs-")
    tmux_bed.script([bash(command), {"text": "Declined."}])
    term = tmux_bed.start(project=project, **SMALL)
    term.wait_for(READY)
    term.type("check the build")
    term.wait_for("Allow Bash?")
    screen = term.wait_until(lambda s: on_one_screen(s, "| base64 -d)", "Yes, run it once"), "the tail on screen")
    assert "Allow Bash? echo checking-the-build" in in_dialog(screen)
    assert "eval runs its arguments as shell code" in unwrapped(screen)
    term.keys("n")
    term.wait_for("Declined.")
    assert not (project / "PWNED").exists()


def test_a_zero_width_character_is_shown_and_the_always_line_names_the_rule(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    command = "git\u200b status --short"
    plain = "git status --short"
    rules = saved_rules(plain, project)
    assert rules, "the policy offers an always rule for a plain git status"
    tmux_bed.script([bash(command, "Show the status"), bash(plain), {"text": "Done."}])
    term = tmux_bed.start(project=project, **SMALL)
    term.wait_for(READY)
    term.type("status please")
    screen = term.wait_for("Allow Bash?")
    screen = term.wait_for("<U+200B>")
    flat = unwrapped(screen)
    assert "git<U+200B> status --short" in flat
    assert "invisible" in flat
    term.keys("n")
    screen = term.wait_until(lambda s: "Allow Bash?" in s and "<U+200B>" not in s, "the second dialog")
    screen = term.wait_for(rules[0])
    assert all(rule in unwrapped(screen) for rule in rules)
    term.keys("n")
    term.wait_for("Done.")


def test_a_command_padded_with_newlines_shows_its_start_and_eval_tail_before_y_inline(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    command = padded("ls -la", "\n")
    tmux_bed.script([bash(command, "List the files"), {"text": "Not run inline."}])
    term = tmux_bed.start("--inline", project=project, **SMALL)
    term.wait_for(INLINE_READY)
    term.type("list the files")
    screen = term.wait_until(lambda s: on_one_screen(s, "base64 -d)", "[n] deny >"), "the question with the tail")
    flat = unwrapped(screen)
    assert "Allow Bash: ls -la <248 blank lines>" in flat
    assert f'; eval "$(echo {PAYLOAD} | base64 -d)"' in flat
    assert "eval runs its arguments as shell code" in flat and "base64 -d decodes" in flat
    assert "the model says: List the files" in flat
    term.type("n")
    term.wait_for("Not run inline.")
    assert not (project / "PWNED").exists()


def test_a_long_multiline_command_shows_start_end_and_count_then_all_of_it_inline(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    command = "\n".join(f"echo step {i}" for i in range(60)) + TAIL
    tmux_bed.script([bash(command), {"text": "Declined inline."}])
    term = tmux_bed.start("--inline", project=project, **SMALL)
    term.wait_for(INLINE_READY)
    term.type("run the steps")
    screen = term.wait_until(lambda s: on_one_screen(s, "base64 -d)", "[n] deny >"), "the question with the tail")
    flat = unwrapped(screen)
    assert "Allow Bash: echo step 0" in flat and "more lines" in flat and "eval runs its arguments" in flat
    term.type("v")  # the whole command, to scroll back through; the question again below it
    screen = term.wait_until(lambda s: unwrapped(s).count("[n] deny >") == 1 and "echo step 40" in s, "every line")
    term.type("n")
    term.wait_for("Declined inline.")
    assert not (project / "PWNED").exists()


def test_a_zero_width_character_and_the_rule_inline(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    command = "git\u200b status --short"
    plain = "git status --short"
    rules = saved_rules(plain, project)
    tmux_bed.script([bash(command), bash(plain), {"text": "Done inline."}])
    term = tmux_bed.start("--inline", project=project, **SMALL)
    term.wait_for(INLINE_READY)
    term.type("status please")
    screen = term.wait_for("<U+200B>")
    assert "git<U+200B> status --short" in unwrapped(screen) and "invisible" in unwrapped(screen)
    term.type("n")
    screen = term.wait_for(f"always allow {rules[0]}")
    term.type("n")
    term.wait_for("Done inline.")


def test_a_long_trust_question_keeps_its_start_end_and_answers_on_screen(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    (project / ".agent_repl").mkdir()
    rules = [f"Bash(tool{i} --flag:*)" for i in range(40)]
    (project / ".agent_repl" / "settings.json").write_text(json.dumps({"permissions": {"allow": rules}}))
    tmux_bed.script([{"text": "Untrusted, fine."}])
    term = tmux_bed.start(project=project, **SMALL)
    screen = term.wait_until(lambda s: on_one_screen(s, "Trust this folder?", "No, not now"), "the trust question")
    flat = in_dialog(screen)
    assert "Trust this folder?" in flat and "Bash(tool0 --flag:*)" in flat and "Bash(tool39 --flag:*)" in flat
    assert "more lines · v shows the whole question" in flat
    assert "Yes, trust this folder" in flat
    term.keys("v")
    screen = term.wait_for("The whole question")
    term.keys("Escape")
    term.wait_until(lambda s: "The whole question" not in s and "No, not now" in s, "the question again")
    term.keys("n")
    term.wait_for(READY)


def test_a_long_trust_question_keeps_its_start_end_and_answers_on_screen_inline(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    (project / ".agent_repl").mkdir()
    rules = [f"Bash(tool{i} --flag:*)" for i in range(40)]
    (project / ".agent_repl" / "settings.json").write_text(json.dumps({"permissions": {"allow": rules}}))
    tmux_bed.script([{"text": "Untrusted inline."}])
    term = tmux_bed.start("--inline", project=project, **SMALL)
    screen = term.wait_for("[n] not now >")
    flat = unwrapped(screen)
    assert "Trust this folder?" in flat and "Bash(tool0 --flag:*)" in flat and "Bash(tool39 --flag:*)" in flat
    assert "more lines · v shows the whole question" in flat
    term.type("v")  # every line into the scrollback, and the question again
    term.wait_until(lambda s: unwrapped(s).count("[n] not now >") == 1 and "Bash(tool20 --flag:*)" in s, "all lines")
    term.type("n")
    term.wait_for(INLINE_READY)
