"""The app learns a turn from its events alone: it never reads the session's history during the turn
and never projects the history again for the status line (docs/architecture.md 4)."""

from __future__ import annotations

import sys
from typing import Any

from agent_repl.core.model.events import TurnEnded
from agent_repl.ui.app import AgentApp
from agent_repl.ui.widgets.messages import AssistantMessageView, LocalCommandView, UserMessageView
from agent_repl.ui.widgets.tool_block import ToolBlock

from .conftest import emulator_launcher
from .helpers import names, wait_for

STEPS = [
    {"text": "Let me run it.", "tools": [{"name": "Bash", "input": {"command": "echo from-the-tool"}}]},
    {"text": "It printed **from-the-tool**."},
]


class HistoryTheUiMayNotRead(list):
    """The session's history, refusing a read whose nearest caller in the agent is the UI's own code
    (the loop, running under the app's worker, reads it freely)."""

    @staticmethod
    def _refuse_the_ui() -> None:
        frame = sys._getframe(2)
        while frame is not None and not frame.f_globals.get("__name__", "").startswith("agent_repl."):
            frame = frame.f_back
        if frame is not None and frame.f_globals["__name__"].startswith("agent_repl.ui"):
            raise AssertionError(f"the UI read the history in {frame.f_code.co_name}")

    def __iter__(self) -> Any:
        self._refuse_the_ui()
        return super().__iter__()

    def __getitem__(self, index: Any) -> Any:
        self._refuse_the_ui()
        return super().__getitem__(index)

    def __len__(self) -> int:
        self._refuse_the_ui()
        return super().__len__()


async def test_a_turn_reaches_the_screen_through_its_events_alone(emulator, project, home):
    server = emulator(STEPS)
    app = AgentApp(
        emulator_launcher(server, project, home, skip_permissions=True), animate=False, warm_client=False
    )
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen), what="the session")
        await pilot.pause()  # the history drawn once, at the start
        session = app.session
        assert session is not None
        session.messages = HistoryTheUiMayNotRead(session.messages)
        projections: list[bool] = []
        project = session.projector.project

        def counted(history: Any, *, dry_run: bool = False) -> Any:
            projections.append(dry_run)
            return project(history, dry_run=dry_run)

        session.projector.project = counted  # type: ignore[method-assign]
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen), what="the end of the turn")
        await pilot.pause()

        [finished] = [m for m in seen if type(m).__name__ == "TurnFinished"]
        assert finished.reason == "completed"
        [ended] = [
            m.event for m in seen if type(m).__name__ == "AgentEventPosted" and isinstance(m.event, TurnEnded)
        ]
        shown = [type(w) for w in app.conversation.children]
        assert UserMessageView in shown and ToolBlock in shown and AssistantMessageView in shown
        assert "from-the-tool" in (app.conversation.query_one(ToolBlock).item.call.result or "")
        # Two requests, two projections: the status line's figure is the estimate the turn ended with.
        assert projections == [False, False]
        assert (
            ended.next_request_tokens is not None and app.status.context_tokens == ended.next_request_tokens
        )
        session.messages = list(session.messages)  # leaving may read it (the resume hint)


async def test_the_app_acts_on_the_one_classification_of_a_typed_line(emulator, project, home):
    """A `# note` opens the memory picker and a `!command` runs in the shell: neither reaches the model."""
    from agent_repl.ui.screens.memory import MemoryPicker

    server = emulator([])
    app = AgentApp(
        emulator_launcher(server, project, home, skip_permissions=True), animate=False, warm_client=False
    )
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen), what="the session")
        await pilot.press(*"!echo from-the-shell", "enter")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen), what="the shell command")
        await pilot.pause()
        # The output joins its command's item from the entry the turn announced.
        shell = app.conversation.query_one(LocalCommandView)
        assert shell.item.command == "! echo from-the-shell" and "from-the-shell" in (shell.item.output or "")
        await pilot.press(*"# use tabs", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoryPicker), what="the memory picker")
        assert app.screen.choices.note == "use tabs"
        await pilot.press("escape")
    assert not server.recordings.messages
