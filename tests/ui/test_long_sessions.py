"""Long sessions: only a window of the history is mounted, and everything is reachable by scrolling."""

from __future__ import annotations

from agent_repl.ui.app import AgentApp
from agent_repl.ui.widgets.conversation import Conversation, tail_start
from agent_repl.ui.widgets.messages import NoticeView

from .conftest import StaticLauncher, fixed_session
from .helpers import assistant, long_history, names, user, wait_for


def test_tail_start_keeps_the_newest_items_within_the_budget():
    from agent_repl.ui.history_view import HistoryView

    view = HistoryView()
    items = view.extend(long_history(50))
    start = tail_start(items, 60)
    assert 0 < start < len(items)
    assert sum(i.lines() for i in items[start:]) <= 60
    assert tail_start(items[:1], 0) == 0  # the newest item is always shown


async def test_a_long_resumed_session_mounts_a_window_and_scrolls_back_to_the_start(tmp_path):
    history = long_history(300)
    project = tmp_path / "p"
    project.mkdir()
    session = fixed_session(history, cwd=project, home=tmp_path / "home")
    app = AgentApp(StaticLauncher(session), animate=False, warm_client=False, max_lines=150)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        conversation = app.conversation
        total = len(conversation.view.items)
        assert total == 660  # 300 prompts, 300 answers, 60 tool calls
        mounted = len(conversation.children)
        assert 0 < mounted < 80 and conversation.first == total - mounted
        assert conversation.mounted_lines() <= 150

        # Scrolling to the top mounts older batches until the first message is there.
        def scrolled_to_the_start() -> bool:
            conversation.scroll_home(animate=False, immediate=True)
            return conversation.first == 0

        await wait_for(pilot, scrolled_to_the_start, what="the first message")
        assert conversation.first == 0
        assert len(conversation.children) == total
        first_view = conversation.children[0]
        assert first_view.item.text == "question number 0"

        # Back at the bottom, the oldest widgets are unmounted again, and new content stays below.
        def at_the_bottom_and_pruned() -> bool:
            conversation.scroll_end(animate=False, immediate=True)
            return conversation.mounted_lines() <= 150

        await wait_for(pilot, at_the_bottom_and_pruned, what="pruning at the bottom")
        session.messages.append(user("new-u", "a new question"))
        await conversation.add_message(session.messages[-1])
        session.messages.append(assistant("new-a", "A new answer.", message_id="new"))
        await conversation.add_message(session.messages[-1])
        await pilot.pause()
        assert conversation.mounted_lines() <= 150
        assert len(conversation.children) < 80
        assert conversation.children[-1].item.text == "A new answer."


async def test_a_long_history_draws_the_screenful_at_its_end_first_and_mounts_the_rest_of_its_window_after(
    tmp_path,
):
    project = tmp_path / "p"
    project.mkdir()
    session = fixed_session(long_history(300), cwd=project, home=tmp_path / "home")
    app = AgentApp(StaticLauncher(session), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        conversation = app.conversation
        first_paint = conversation.mounted_lines()
        assert conversation.window_pending
        assert first_paint <= 2 * conversation.size.height  # a screenful, not the window's 300 lines
        await pilot.pause()
        assert 0 < conversation.max_scroll_y == conversation.scroll_y  # the screen full, at the newest entry

        await wait_for(pilot, lambda: not conversation.window_pending, what="the rest of the window")
        await pilot.pause()
        assert first_paint < conversation.mounted_lines() <= 300
        assert conversation.first == len(conversation.view.items) - len(conversation.children)
        assert conversation.scroll_y == conversation.max_scroll_y  # still following the bottom
        assert conversation.children[-1].item is conversation.view.items[-1]


async def test_scrolling_up_before_the_rest_of_the_window_is_mounted_keeps_the_text_on_screen_still(
    tmp_path, monkeypatch
):
    # The rest of the window is held until the test has scrolled: on a loaded machine its short
    # timer could otherwise fire before the scroll (seen in a soak: window_pending already False).
    held: list = []
    set_timer = Conversation.set_timer

    def holding_set_timer(self, delay, callback=None, **kwargs):
        if getattr(getattr(callback, "func", None), "__name__", "") == "_mount_window":
            held.append(callback)
            return None
        return set_timer(self, delay, callback, **kwargs)

    monkeypatch.setattr(Conversation, "set_timer", holding_set_timer)
    project = tmp_path / "p"
    project.mkdir()
    session = fixed_session(long_history(300), cwd=project, home=tmp_path / "home")
    app = AgentApp(StaticLauncher(session), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        await pilot.pause()
        conversation = app.conversation
        conversation.scroll_to(y=conversation.max_scroll_y - 5, animate=False, immediate=True)
        await pilot.pause()
        assert conversation.window_pending
        top = next(w for w in conversation.children if w.region.y >= conversation.region.y)
        on_screen = top.region.y
        assert len(held) == 1
        # Where the text is in every layout from here on: no frame may show it moved (under load a
        # screen read, and a paint, once came between the layout placing the older widgets above
        # and the scroll that keeps the text still: 69 rows down).
        laid_out: list[int] = []
        app.screen.screen_layout_refresh_signal.subscribe(
            conversation, lambda _screen: laid_out.append(top.region.y), immediate=True
        )
        await held[0]()
        # What `pilot.pause()` does when the machine is slow: a layout before anything else has run.
        app.screen._on_timer_update()
        assert top.region.y == on_screen
        await wait_for(pilot, lambda: not conversation.window_pending, what="the rest of the window")
        await pilot.pause()
        assert conversation.first < len(conversation.view.items) - 20
        assert top.region.y == on_screen
        assert laid_out and set(laid_out) == {on_screen}


class EarlierInTheTranscript:
    """What a resume left in the transcript: counted, and read back when asked."""

    def __init__(self, entries: list) -> None:
        self.entries = entries
        self.todo_entries: list = []
        self.reads = 0

    @property
    def count(self) -> int:
        return len(self.entries)

    def load(self) -> list:
        self.reads += 1
        return list(self.entries)


async def test_a_resume_shows_its_tail_first_and_reads_the_earlier_entries_when_scrolled_up_to(tmp_path):
    history = long_history(60)
    cut = len(history) - 40
    project = tmp_path / "p"
    project.mkdir()
    session = fixed_session(history[cut:], cwd=project, home=tmp_path / "home")
    session.earlier = earlier = EarlierInTheTranscript(history[:cut])
    app = AgentApp(StaticLauncher(session), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 24), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        conversation = app.conversation
        shown = len(conversation.view.items)

        # What fills the screen is drawn first; the rest of the tail (and the note above it) follows.
        def tail_mounted() -> bool:
            top = conversation.children[0]
            return isinstance(top, NoticeView) and f"{cut} earlier entries" in top.item.text

        await wait_for(pilot, tail_mounted, what="the whole tail mounted")
        assert earlier.reads == 0
        notice = conversation.children[0]
        assert f"{cut} earlier entries" in notice.item.text

        def scrolled_to_the_start() -> bool:
            if not earlier.reads:  # scrolled up again, in case the tail was still being mounted
                conversation.scroll_end(animate=False, immediate=True)
            conversation.scroll_home(animate=False, immediate=True)
            return earlier.reads == 1 and conversation.first == 0 and len(conversation.view.items) > shown

        await wait_for(pilot, scrolled_to_the_start, what="the earlier entries")
        assert conversation.children[0].item.text == "question number 0"
        assert earlier.reads == 1
        assert [m.uuid for m in session.messages] == [m.uuid for m in history[cut:]]
