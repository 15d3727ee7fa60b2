"""Edits in the app against the emulator: the diff dialog, the three permission modes, the todo list."""

from __future__ import annotations

import json

from textual import events

from agent_repl.core.permissions.mode import PermissionMode
from agent_repl.ui.app import AgentApp
from agent_repl.ui.screens.edit_permission import EditPermissionScreen, PlanApprovalScreen
from agent_repl.ui.tool_render import headline
from agent_repl.ui.widgets.tool_block import ToolBlock

from .conftest import emulator_launcher
from .helpers import names, wait_for


def _edit_steps(app_py: str) -> list[dict]:
    return [
        {"text": "Reading it first.", "tools": [{"name": "Read", "input": {"file_path": app_py}}]},
        {
            "text": "Changing the greeting.",
            "tools": [{"name": "Edit", "input": {"file_path": app_py, "old_string": "'hi'", "new_string": "'hello'"}}],
        },
        {
            "text": "And a second line.",
            "tools": [
                {"name": "Edit", "input": {"file_path": app_py, "old_string": "print('hello')", "new_string": "print('hello')\nprint('bye')"}}
            ],
        },
        {"text": "Done: app.py now says hello and bye."},
    ]


def _screen_text(app) -> str:
    return "\n".join(str(w.render()) for w in app.screen.query("Static"))


def _shown(app, screen_type) -> bool:
    """The dialog is up and composed (the screen becomes current before its widgets exist)."""
    return isinstance(app.screen, screen_type) and bool(app.screen.query("OptionList"))


async def _ready(pilot, seen) -> None:
    await wait_for(pilot, lambda: "SessionReady" in names(seen), what="the session")


async def test_the_diff_dialog_and_dont_ask_again_switch_to_accept_edits(emulator, project, home):
    app_py = str(project / "src" / "app.py")
    server = emulator(_edit_steps(app_py))
    app = AgentApp(emulator_launcher(server, project, home), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(110, 45), message_hook=seen.append) as pilot:
        await _ready(pilot, seen)
        assert "accept edits" not in str(app.status.render())
        await pilot.press(*"say hello", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, EditPermissionScreen), what="the edit prompt")
        await wait_for(pilot, lambda: "- print('hi')" in _screen_text(app), what="the diff")
        shown = _screen_text(app)
        assert "Make this edit to src/app.py?" in shown
        assert "- print('hi')" in shown and "+ print('hello')" in shown
        assert "1 line added, 1 line removed" in shown
        # The option itself, not its painted line: under load the list may not have painted yet.
        options = app.screen.query_one("#permission-options")
        assert "don't ask again for edits this session" in str(options.get_option_at_index(1).prompt)
        await pilot.press("a")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen), what="the end of the turn")
        await pilot.pause()
        asked = [m for m in seen if type(m).__name__ == "PermissionAsked"]
        assert len(asked) == 1, "the second edit ran without asking"
        assert app.session.permission_mode is PermissionMode.ACCEPT_EDITS
        assert "⏵⏵ accept edits on" in str(app.status.render())
        assert (project / "src" / "app.py").read_text() == "print('hello')\nprint('bye')\n"
        blocks = [b for b in app.conversation.query(ToolBlock) if b.item.call.name == "Edit"]
        assert len(blocks) == 2 and not blocks[0].collapsed
        body = str(blocks[1].query_one(".tool-body").render())
        assert "+ print('bye')" in body


async def test_no_with_feedback_reaches_the_model(emulator, project, home):
    app_py = str(project / "src" / "app.py")
    server = emulator(_edit_steps(app_py)[:2] + [{"text": "Understood."}])
    app = AgentApp(emulator_launcher(server, project, home), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(110, 45), message_hook=seen.append) as pilot:
        await _ready(pilot, seen)
        await pilot.press(*"say hello", "enter")
        await wait_for(pilot, lambda: _shown(app, EditPermissionScreen))
        await pilot.press("n")
        await pilot.press(*"say hey instead", "enter")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen))
    assert (project / "src" / "app.py").read_text() == "print('hi')\n"
    last = [e.body for e in server.recordings.messages if e.status == 200][-1]
    assert "and said: say hey instead" in json.dumps(last["messages"][-1])


def _type_ahead(app, keys: str) -> None:
    """Queue every key at once, as a fast typist or a lagging terminal sends them: none waits for
    the app to act on the one before (under load, pilot.press gives no more than that)."""
    for key in keys.split(" "):
        app._driver.send_message(events.Key(key, key if len(key) == 1 else None))


async def test_keys_typed_right_after_no_are_feedback_and_never_an_answer(emulator, project, home):
    app_py = str(project / "src" / "app.py")
    server = emulator(_edit_steps(app_py)[:2] + [{"text": "Understood."}])
    app = AgentApp(emulator_launcher(server, project, home), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(110, 45), message_hook=seen.append) as pilot:
        await _ready(pilot, seen)
        await pilot.press(*"say hello", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, EditPermissionScreen), what="the edit prompt")
        # Enter on the list would pick its highlighted "Yes"; y and a are answers until n is taken.
        _type_ahead(app, "n a y enter")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen), what="the end of the turn")
    assert (project / "src" / "app.py").read_text() == "print('hi')\n"
    assert app.session.permission_mode is PermissionMode.DEFAULT
    last = [e.body for e in server.recordings.messages if e.status == 200][-1]
    assert "and said: ay" in json.dumps(last["messages"][-1])


async def test_shift_tab_cycles_the_three_modes_and_plan_mode_refuses_edits(emulator, project, home):
    app_py = str(project / "src" / "app.py")
    steps = [
        {"text": "Trying to edit.", "tools": [{"name": "Edit", "input": {"file_path": app_py, "old_string": "'hi'", "new_string": "'x'"}}]},
        {"text": "Here is my plan.", "tools": [{"name": "ExitPlanMode", "input": {"plan": "## Plan\n1. Say **hello**"}}]},
        {"text": "Starting."},
    ]
    server = emulator(steps)
    app = AgentApp(emulator_launcher(server, project, home), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(110, 45), message_hook=seen.append) as pilot:
        await _ready(pilot, seen)
        labels = []
        for _ in range(3):
            await pilot.press("shift+tab")
            labels.append((app.session.permission_mode, str(app.status.render()).split("  ")[0]))
        assert labels == [
            (PermissionMode.ACCEPT_EDITS, "⏵⏵ accept edits on (shift+tab to cycle)"),
            (PermissionMode.PLAN, "⏸ plan mode on (shift+tab to cycle)"),
            (PermissionMode.DEFAULT, str(app.status.render()).split("  ")[0]),
        ]
        assert "shift+tab" not in str(app.status.render())
        await pilot.press("shift+tab", "shift+tab")
        assert app.session.permission_mode is PermissionMode.PLAN
        await pilot.press(*"plan it", "enter")
        await wait_for(pilot, lambda: _shown(app, PlanApprovalScreen), what="the plan prompt")
        assert app.screen.request.preview.plan == "## Plan\n1. Say **hello**"
        await wait_for(pilot, lambda: "Say" in app.export_screenshot(), what="the plan on screen")
        assert "hello" in app.export_screenshot()
        await pilot.press("a")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen))
        await pilot.pause()
        assert app.session.permission_mode is PermissionMode.ACCEPT_EDITS
        assert "accept edits on" in str(app.status.render())
    assert (project / "src" / "app.py").read_text() == "print('hi')\n"
    first = [e.body for e in server.recordings.messages if e.status == 200][0]
    assert "Plan mode is on" in json.dumps(first["messages"][-1])


async def test_the_todo_list_shows_above_the_input(emulator, project, home):
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
    ]
    steps = [{"text": "Planning.", "tools": [{"name": "TodoWrite", "input": {"todos": todos}}]}, {"text": "On it."}]
    server = emulator(steps)
    app = AgentApp(emulator_launcher(server, project, home), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(110, 45), message_hook=seen.append) as pilot:
        await _ready(pilot, seen)
        assert not app.todos.display
        await pilot.press(*"fix it", "enter")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen))
        await pilot.pause()
        assert app.todos.display
        panel = str(app.todos.render())
        assert panel.splitlines() == ["Todos 1/3", "☒ Read the code", "◐ Fixing the bug", "☐ Run the tests"]
        block = next(b for b in app.conversation.query(ToolBlock) if b.item.call.name == "TodoWrite")
        assert "◐ Fixing the bug" in str(block.query_one(".tool-body").render())
        assert headline(block.item.call) == "TodoWrite(3 items)"


async def test_a_protected_file_is_asked_with_its_reason_and_no_always_even_in_accept_edits(emulator, project, home):
    target = project / ".mcp.json"
    server = emulator([
        {"tools": [{"name": "Write", "input": {"file_path": str(target), "content": '{"mcpServers": {}}'}}]},
        {"text": "Left it alone."},
    ])  # fmt: skip
    app = AgentApp(emulator_launcher(server, project, home), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(110, 45), message_hook=seen.append) as pilot:
        await _ready(pilot, seen)
        app.session.mode.set(PermissionMode.ACCEPT_EDITS)
        await pilot.press(*"add a server", "enter")
        await wait_for(pilot, lambda: _shown(app, EditPermissionScreen), what="the edit prompt")
        shown = _screen_text(app)
        assert "Create .mcp.json?" in shown and "writing it always asks" in shown
        options = [str(o.prompt) for o in app.screen.query_one("OptionList").options]
        assert not any("don't ask again" in o for o in options), options
        await pilot.press("escape")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen), what="the end of the turn")
    assert not target.exists()
    assert app.session.mode.mode is PermissionMode.ACCEPT_EDITS


async def test_esc_in_the_edit_dialog_refuses_and_stops_the_turn_but_esc_after_n_is_a_plain_no(emulator, project, home):
    app_py = str(project / "src" / "app.py")
    steps = _edit_steps(app_py)
    server = emulator([steps[0], steps[1], steps[1], {"text": "Fine, left it."}])
    app = AgentApp(emulator_launcher(server, project, home), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(110, 45), message_hook=seen.append) as pilot:
        await _ready(pilot, seen)
        await pilot.press(*"say hello", "enter")
        await wait_for(pilot, lambda: _shown(app, EditPermissionScreen), what="the first edit prompt")
        await pilot.press("escape")  # no, and the turn stops: the model is not asked again
        await wait_for(pilot, lambda: names(seen).count("TurnFinished") == 1, what="the stopped turn")
        assert len(server.recordings.messages) == 2 and not isinstance(app.screen, EditPermissionScreen)
        await pilot.press(*"try again", "enter")
        await wait_for(pilot, lambda: _shown(app, EditPermissionScreen))
        await pilot.press("n", "escape")  # Esc in the feedback line: just no, the turn goes on
        await wait_for(pilot, lambda: names(seen).count("TurnFinished") == 2, what="the second turn")
    assert (project / "src" / "app.py").read_text() == "print('hi')\n"
    bodies = [json.dumps(e.body["messages"]) for e in server.recordings.messages if e.status == 200]
    assert len(bodies) == 4
    assert "The user rejected this Edit call and stopped the turn" in bodies[2]
    assert "Permission to use Edit" in bodies[3]
