"""A resume draws the session's newest entries first, then the opened session takes their place."""

from __future__ import annotations

import asyncio
import json
import threading
from contextlib import ExitStack

from agent_repl import bootstrap, cli
from agent_repl.cli import ContinueChoice, _tail_preview, prepare_launch
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


async def test_the_preview_is_read_off_the_screen_s_thread(tmp_path):
    history = long_history(20)
    project = tmp_path / "p"
    project.mkdir()
    readers: list[threading.Thread] = []

    def preview():
        readers.append(threading.current_thread())
        return history[-6:]

    launcher = HeldLauncher(fixed_session(history, cwd=project, home=tmp_path / "home"), preview=preview)
    app = AgentApp(launcher, animate=False, warm_client=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: "Answer number 19" in screen(app), what="the preview")
        launcher.release.set()
    assert readers and readers[0] is not threading.main_thread()


async def write_session_at(home, cwd, sid: str, question: str, when: str):
    from agent_repl.core.model.messages import AssistantMessage, TextBlock, UserMessage

    paths = SessionPaths(home=home, cwd=cwd, session_id=sid)
    paths.ensure_project_dir()
    writer = TranscriptWriter(paths)
    await writer.append_messages(
        [
            UserMessage(content=question, timestamp=when),
            AssistantMessage(message_id=f"m-{sid[:4]}", content=[TextBlock(text="noted")], timestamp=when),
        ]
    )
    await writer.close()
    return paths.transcript


async def test_continue_previews_the_newest_session_and_the_launch_resumes_that_one_without_listing_again(
    tmp_path, monkeypatch
):
    home, cwd = tmp_path / "home", tmp_path / "project"
    cwd.mkdir()
    for key, value in {
        "AGENT_REPL_HOME": str(home), "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"
    }.items():  # fmt: skip
        monkeypatch.setenv(key, value)
    # The newer session is written first: the choice is by last activity, as --continue's is.
    newer = await write_session_at(home, cwd, "5e55a0de-0000-4000-8000-00000000000b", "the newer one", "2026-12-06T10:00:00.000Z")
    await write_session_at(home, cwd, "5e55a0de-0000-4000-8000-00000000000a", "the older one", "2026-12-05T10:00:00.000Z")
    args = build_parser().parse_args(["--continue"])
    continued = ContinueChoice()

    preview = _tail_preview(args, cwd, continued)

    assert preview is not None
    assert [m.text() for m in preview()][0] == "the newer one"
    assert continued.path == newer
    listings: list = []
    real_list = bootstrap.list_sessions
    monkeypatch.setattr(bootstrap, "list_sessions", lambda project: listings.append(project) or real_list(project))
    monkeypatch.setattr(cli, "_resolved_model", lambda settings, offline=False: settings)  # no endpoint here
    with ExitStack() as stack:
        launch = prepare_launch(args, cwd, stack, None, continued)
    assert launch.resume is not None and launch.resume.path == newer and launch.resume.owned
    assert listings == []  # the preview's listing was the only one

    # A choice that is not a session of this folder in the settings' home is not trusted: the
    # launch lists the sessions itself, and finds the same newest one.
    elsewhere = tmp_path / "elsewhere" / newer.name
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(newer.read_bytes())
    with ExitStack() as stack:
        launch = prepare_launch(args, cwd, stack, None, ContinueChoice(elsewhere))
    assert launch.resume is not None and launch.resume.path == newer and len(listings) == 1
