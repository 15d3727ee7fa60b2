"""A resume draws the session's newest entries first, then the opened session takes their place."""

from __future__ import annotations

import asyncio
import json

from agent_repl.cli import _tail_preview
from agent_repl.launch_flags import build_parser
from agent_repl.transcript.paths import SessionPaths
from agent_repl.transcript.writer import TranscriptWriter
from agent_repl.ui.app import AgentApp

from .conftest import StaticLauncher, fixed_session
from .helpers import long_history, names, wait_for


def screen(app) -> str:
    """The screen's text (the screenshot is SVG, its spaces written as entities)."""
    return app.export_screenshot().replace("&#160;", " ")


class HeldLauncher(StaticLauncher):
    """Opens its session only when the test lets it (a long transcript being read)."""

    def __init__(self, session, preview) -> None:
        super().__init__(session)
        self.preview = preview
        self.release = asyncio.Event()

    async def open(self, ask, confirm_trust=None):  # type: ignore[override]
        await self.release.wait()
        return await super().open(ask, confirm_trust)


async def test_the_newest_entries_are_on_screen_before_the_session_opens_and_stay_after(tmp_path):
    history = long_history(300)
    project = tmp_path / "p"
    project.mkdir()
    session = fixed_session(history, cwd=project, home=tmp_path / "home")
    launcher = HeldLauncher(session, preview=lambda: history[-12:])
    app = AgentApp(launcher, animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "Answer number 299" in screen(app), what="the preview")
        assert app.holder is None and "SessionReady" not in names(seen)
        assert len(app.conversation.view.items) < 20  # only what the preview read

        launcher.release.set()
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        await pilot.pause()
        conversation = app.conversation
        assert len(conversation.view.items) == 660  # the whole history replaced the preview
        assert conversation.first == len(conversation.view.items) - len(conversation.children)
        assert conversation.children[-1].item is conversation.view.items[-1]
        assert screen(app).count("Answer number 299") == 1


async def test_without_a_preview_the_screen_waits_for_the_session(tmp_path):
    history = long_history(5)
    project = tmp_path / "p"
    project.mkdir()
    launcher = HeldLauncher(fixed_session(history, cwd=project, home=tmp_path / "home"), preview=lambda: [])
    app = AgentApp(launcher, animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await pilot.pause()
        assert not app.conversation.view.items
        launcher.release.set()
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        await wait_for(pilot, lambda: "Answer number 4" in screen(app), what="the history")


async def test_the_cli_previews_a_session_of_this_folder_named_by_its_id_or_a_prefix(tmp_path, monkeypatch):
    from agent_repl.core.model.messages import AssistantMessage, TextBlock, UserMessage

    home, cwd = tmp_path / "home", tmp_path / "project"
    cwd.mkdir()
    monkeypatch.setenv("AGENT_REPL_HOME", str(home))
    sid = "5e55a0de-0000-4000-8000-00000000cafe"
    paths = SessionPaths(home=home, cwd=cwd, session_id=sid)
    paths.ensure_project_dir()
    writer = TranscriptWriter(paths)
    question = UserMessage(content="what is in the box?")
    await writer.append_messages(
        [question, AssistantMessage(message_id="m1", content=[TextBlock(text="a cat")])]
    )
    await writer.close()
    parser = build_parser()

    for ref in (sid, sid[:8]):
        preview = _tail_preview(parser.parse_args(["--resume", ref]), cwd)
        assert preview is not None and [m.uuid for m in preview()][0] == question.uuid
    assert _tail_preview(parser.parse_args(["--resume", "5e55ffff"]), cwd)() == []  # no such session
    assert (
        _tail_preview(parser.parse_args(["--resume", str(paths.transcript)]), cwd)() == []
    )  # a path: forked
    assert _tail_preview(parser.parse_args(["--continue"]), cwd) is None
    assert _tail_preview(parser.parse_args([]), cwd) is None
    assert json.loads(paths.transcript.read_text().splitlines()[0])["sessionId"] == sid
