"""The Bash permission dialog in a small app (Pilot): it always fits the screen with its options,
the command's start and risky end in view, the model's words labelled, "always" naming the exact
rule; `v` reads the whole command and comes back to the question."""

from __future__ import annotations

import base64

from textual.widgets import Static

from agent_repl.core.permissions.rules import Decision, PermissionRequest
from agent_repl.ui.app import AgentApp
from agent_repl.ui.screens.permission import CommandPreview, CommandViewer, PermissionScreen

from .conftest import StaticLauncher, fixed_session
from .helpers import wait_for

TAIL = f'; eval "$(echo {base64.b64encode(b"touch PWNED").decode()} | base64 -d)"'
SMALL = (80, 24)


def padded(head: str, filler: str, length: int = 300) -> str:
    room = length - len(head) - len(TAIL)
    return head + (filler * room)[:room] + TAIL


async def open_dialog(pilot, request: PermissionRequest) -> tuple[PermissionScreen, list]:
    app = pilot.app
    await wait_for(pilot, lambda: app.holder is not None, what="the session")
    answers: list = []
    app.push_screen(PermissionScreen(request), callback=answers.append)
    await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), what="the dialog")
    await pilot.pause()
    await pilot.pause()
    return app.screen, answers


def app_for(project, home) -> AgentApp:
    session = fixed_session([], cwd=project, home=home)
    return AgentApp(StaticLauncher(session), animate=False, warm_client=False, clock=lambda: 1_000.0)


def fits(screen: PermissionScreen) -> bool:
    dialog = screen.query_one("#permission-dialog").region
    options = screen.query_one("#permission-options").region
    return dialog.y >= 0 and dialog.bottom <= screen.size.height and options.bottom <= dialog.bottom


async def test_a_padded_command_fits_with_its_tail_and_the_options(project, home):
    command = padded("ls -la", "\n")
    request = PermissionRequest("Bash", command, "List the files", always_rules=("Bash(ls:*)",))
    async with app_for(project, home).run_test(size=SMALL) as pilot:
        screen, answers = await open_dialog(pilot, request)
        assert fits(screen)
        shown = screen.preview.view(screen.preview.size.width).text().split("\n")
        assert shown[0] == "ls -la" and shown[1] == "<248 blank lines>"
        assert shown[-1].endswith("| base64 -d)\"")
        assert screen.query_one("#permission-options").has_focus
        notes = str(screen.query_one("#permission-notes").render())
        assert "eval runs its arguments as shell code" in notes and "base64 -d decodes" in notes
        assert str(screen.query_one("#permission-description").render()) == "the model says: List the files"
        prompts = [str(o.prompt) for o in screen.query_one("#permission-options").options]
        assert prompts[1] == "a  Yes, and always allow Bash(ls:*) in this project"
        await pilot.press("n")
        await pilot.pause()
    assert answers == [Decision.DENY]


async def test_a_crowded_dialog_still_fits_and_shows_both_ends(project, home):
    command = "\n".join(f"echo {i} > out{i}.txt | sh -c x $(id) `id`" for i in range(80)) + "\u200b" + TAIL
    rules = tuple(f"Bash(tool{i} subcommand:*)" for i in range(6))
    request = PermissionRequest("Bash", command, "Why: " + "because " * 200, always_rules=rules)
    async with app_for(project, home).run_test(size=SMALL) as pilot:
        screen, _ = await open_dialog(pilot, request)
        assert fits(screen)
        view = screen.preview.view(screen.preview.size.width)
        assert view.hidden_lines > 0 and "more lines" in view.text()
        assert view.text().startswith("echo 0 > out0.txt")
        assert "base64" in view.text().split("\n")[-1] or "base64" in view.text().split("\n")[-2]
        await pilot.press("n")


async def test_v_shows_the_whole_command_and_comes_back_to_the_question(project, home):
    command = "\n".join(f"echo step {i}" for i in range(60)) + TAIL
    request = PermissionRequest("Bash", command)
    async with app_for(project, home).run_test(size=SMALL) as pilot:
        screen, answers = await open_dialog(pilot, request)
        assert screen.preview.view(screen.preview.size.width).hidden_lines > 0
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, CommandViewer), what="the viewer")
        await pilot.pause()
        whole = pilot.app.screen.query_one("#command-viewer-command", CommandPreview)
        view = whole.view(whole.size.width)
        assert view.hidden_lines == 0 and whole.size.height == view.total_lines
        assert "".join(view.text().split("\n")[59:]) == f"echo step 59{TAIL}"
        assert view.text().split("\n")[:59] == [f"echo step {i}" for i in range(59)]
        assert "eval runs its arguments" in str(pilot.app.screen.query_one("#permission-notes", Static).render())
        await pilot.press("y")  # the viewer answers nothing
        await pilot.pause()
        assert answers == []
        await pilot.press("escape")
        await wait_for(pilot, lambda: pilot.app.screen is screen, what="the question again")
        await pilot.press("n")
        await pilot.pause()
    assert answers == [Decision.DENY]


def test_an_edit_prompt_shows_a_hidden_character_in_the_path():
    from agent_repl.core.tooling.diffs import FileChange
    from agent_repl.ui.screens.edit_permission import edit_title

    change = FileChange("/p/.git\u200b/config", ".git\u200b/config", "a\n", "b\n", [])
    assert edit_title(PermissionRequest("Edit", change.path, preview=change)) == "Make this edit to .git<U+200B>/config?"
    new = FileChange("/p/\u0441onfig.py", "\u0441onfig.py", None, "x\n", [])
    assert edit_title(PermissionRequest("Write", new.path, preview=new)) == "Create <U+0441>onfig.py?"


async def test_an_answer_before_the_layout_came_round_does_not_crash_the_app(project, home):
    """A quick `n` took the dialog down while its fitting was still queued for after the next
    refresh; that fit then found no dialog and the app died with NoMatches (seen under load in
    tests/ui/test_tmux_permission_dialog.py)."""
    request = PermissionRequest("Bash", padded("echo hi", " "), "Say hi")
    async with app_for(project, home).run_test(size=SMALL) as pilot:
        screen, answers = await open_dialog(pilot, request)
        await pilot.press("n")
        await pilot.pause()
        screen._fit(replan=False)
        screen._fit(replan=True)
    assert answers == [Decision.DENY]
