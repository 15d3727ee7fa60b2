"""What a streamed chunk costs with a long history: no layout of the whole conversation per chunk,
a bounded number of mounted widgets, and a garbage collector that does not walk the loaded history."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from agent_repl.core.model.events import TextDelta, ThinkingDelta, TurnEnded
from agent_repl.core.model.messages import Usage
from agent_repl.ui.app import AgentApp
from agent_repl.ui.gc_policy import GcPolicy
from agent_repl.ui.widgets.messages import StreamingThinkingView
from agent_repl.ui.widgets.streaming import StreamingAnswerView, finished_end

from .conftest import StaticLauncher, fixed_session
from .helpers import assistant, long_history, names, user, wait_for


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """The test starts and ends with nothing frozen (freezing is process-wide)."""
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_finished_blocks_end_at_the_last_blank_line_outside_a_code_fence():
    assert finished_end("A paragraph still stream") == 0
    assert finished_end("One.\n\nTwo is stream") == len("One.\n\n")
    fenced = "Intro.\n\n```\ncode\n\nmore code\n"
    assert finished_end(fenced) == len("Intro.\n\n")
    closed = fenced + "```\n\nAfter"
    assert finished_end(closed) == len(closed) - len("After")


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_frozen_garbage_waits_for_the_full_collection_and_young_garbage_goes_at_each_turn(unfrozen):
    policy = GcPolicy(full_every=3)
    old = Cycle()
    old_ref = weakref.ref(old)
    policy.history_shown()
    del old
    young = Cycle()
    young_ref = weakref.ref(young)
    del young
    policy.turn_ended()
    assert young_ref() is None  # made during the turn: collected when it ends
    assert old_ref() is not None  # frozen with the history: out of the collector's sight
    policy.turn_ended()
    assert old_ref() is not None
    policy.turn_ended()  # the third turn collects everything
    assert old_ref() is None
    assert gc.get_freeze_count() > 0  # and freezes again what lives on


def app_with_history(tmp_path, pairs: int) -> AgentApp:
    project = tmp_path / "p"
    project.mkdir()
    session = fixed_session(long_history(pairs), cwd=project, home=tmp_path / "home")
    return AgentApp(StaticLauncher(session), animate=False, warm_client=False)


async def test_the_shown_history_is_frozen_out_of_the_collector(tmp_path, unfrozen):
    app = app_with_history(tmp_path, 300)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        await wait_for(pilot, gc.get_freeze_count, what="the history frozen")
        # Frozen objects sit outside the collector's generations: a full collection no longer walks them.
        newest = app.session.messages[-1]
        assert not any(o is newest for o in gc.get_objects())


async def test_no_collection_runs_while_the_app_starts_and_they_run_again_once_its_history_is_shown(tmp_path, unfrozen):
    app = app_with_history(tmp_path, 300)
    seen: list = []
    collections: list[bool] = []  # for each collection, whether it ran before the history was frozen

    def counted(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append(not gc.get_freeze_count())

    gc.callbacks.append(counted)
    try:
        async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
            assert not gc.isenabled()
            await wait_for(pilot, lambda: "SessionReady" in names(seen))
            await wait_for(pilot, gc.isenabled, what="collections back on")
            assert gc.get_freeze_count() > 0  # what start-up made is frozen
    finally:
        gc.callbacks.remove(counted)
    assert not any(collections)


async def test_collections_run_again_when_the_app_fails_to_start(tmp_path):
    from agent_repl.ui.launcher import Launcher, LaunchError

    def prepare(stack):
        raise LaunchError("settings.json: not valid JSON")

    app = AgentApp(Launcher(tmp_path, prepare), animate=False, warm_client=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: not app.is_running, what="exit")
    assert app.return_code == 2
    assert gc.isenabled()


async def test_collections_run_again_when_opening_the_first_session_breaks(tmp_path):
    from agent_repl.ui.launcher import Launcher

    def prepare(stack):
        raise RuntimeError("a bug while preparing")

    from textual.worker import Worker, WorkerState

    app = AgentApp(Launcher(tmp_path, prepare), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:

        def boot_failed() -> bool:
            return any(
                isinstance(m, Worker.StateChanged) and m.worker.group == "boot" and m.state is WorkerState.ERROR
                for m in seen
            )

        await wait_for(pilot, boot_failed, what="the failed start")
        assert gc.isenabled()


def count_reflows(app: AgentApp) -> list[int]:
    """A list that gets an entry each time the screen lays out its widgets."""
    compositor = app.screen._compositor
    reflows: list[int] = []
    original = compositor.reflow

    def counting_reflow(parent, size):
        reflows.append(1)
        return original(parent, size)

    compositor.reflow = counting_reflow  # type: ignore[method-assign]
    return reflows


async def test_streamed_thinking_lays_out_the_conversation_only_while_it_gains_lines(tmp_path):
    app = app_with_history(tmp_path, 300)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        await wait_for(pilot, lambda: not app.conversation.window_pending, what="the history's window mounted")
        await pilot.pause()
        conversation = app.conversation
        await conversation.apply(ThinkingDelta(text="I look at the files first."))
        await pilot.pause()
        reflows = count_reflows(app)
        for n in range(30):
            await conversation.apply(ThinkingDelta(text=f" then step {n}" + ("\n" if n in (5, 12, 20) else "")))
            await pilot.pause()
        [view] = conversation.query(StreamingThinkingView)
        assert "step 29" in str(view.render())
        assert len(reflows) <= 5  # a few while it gains lines; one per chunk would be 30


async def test_streamed_chunks_do_not_lay_out_the_conversation_each_time(tmp_path):
    app = app_with_history(tmp_path, 300)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        await wait_for(pilot, lambda: not app.conversation.window_pending, what="the history's window mounted")
        await pilot.pause()
        conversation = app.conversation
        reflows = count_reflows(app)
        chunks = 40
        for n in range(chunks):
            await conversation.apply(TextDelta(text=f"word{n} " + ("\n\n" if n % 8 == 7 else "")))
            await pilot.pause()
        [view] = conversation.query(StreamingAnswerView)
        assert "word39" in view.source
        drawn = "\n".join(line.text for line in view._lines)
        assert "word0" in drawn and "word39" in drawn
        # Five short paragraphs: the region grows a few times; a layout per chunk would be 40.
        assert len(reflows) <= 6

        # The turn ends without its message (interrupted): the region fits its text, no blank rows below.
        await conversation.apply(TurnEnded(reason="interrupted", num_requests=1, usage=Usage()))
        await pilot.pause()
        assert view.size.height == len(view._lines)


async def test_the_mounted_widgets_stay_bounded_as_turns_are_added(tmp_path):
    app = app_with_history(tmp_path, 2_000)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        await pilot.pause()
        conversation = app.conversation
        assert len(conversation.view.items) > 4_000
        assert len(conversation.children) <= 80
        for n in range(150):
            prompt, answer = user(f"new-u-{n}", f"new question {n}"), assistant(f"new-a-{n}", f"New answer {n}.")
            app.session.messages += [prompt, answer]
            await conversation.add_messages([prompt, answer])
        await pilot.pause()
        assert len(conversation.children) <= 80
        assert len(list(app.screen.walk_children())) <= 200
        assert conversation.children[-1].item.text == "New answer 149."


async def test_a_pruned_widget_leaves_nothing_it_drew_behind_after_the_turn(tmp_path, unfrozen):
    app = app_with_history(tmp_path, 100)
    seen: list[str] = []  # names only: a recorded message would keep its widget alive
    async with app.run_test(size=(100, 40), message_hook=lambda m: seen.append(type(m).__name__)) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in seen)
        await pilot.pause()
        conversation = app.conversation
        drawn = [weakref.ref(widget._styles_cache) for widget in conversation.children]
        for n in range(120):
            prompt, answer = user(f"new-u-{n}", f"new question {n}"), assistant(f"new-a-{n}", f"New answer {n}.")
            app.session.messages += [prompt, answer]
            await conversation.add_messages([prompt, answer])
            await pilot.pause()
        assert conversation.first > 200  # the first widgets are long unmounted
        for _ in range(app.gc_policy.full_every):  # by the next collection of everything
            app.gc_policy.turn_ended()
        assert [ref for ref in drawn if ref() is not None] == []
