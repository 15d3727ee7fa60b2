"""A queued task notification in a resumed Claude Code session shows as a one-line notice, not as
tagged text the user typed."""

from __future__ import annotations

from pathlib import Path

from agent_repl.core.model.messages import UserMessage
from agent_repl.transcript.loader import load_session
from agent_repl.ui.app import AgentApp
from agent_repl.ui.history_view import HistoryView, NoticeItem, UserItem, task_notice
from agent_repl.ui.widgets.messages import NoticeView, UserMessageView

from .conftest import StaticLauncher, fixed_session
from .helpers import names, wait_for

FIXTURE = (
    Path(__file__).resolve().parents[1] / "transcript" / "fixtures" / "cc_2.1.332_compact"
    / "ac7462df-3819-4b68-9505-686fb6944771.jsonl"
)
NOTICE = "background task b81mqumhx completed: [Claude Code status line replaced]"


def test_the_notification_of_the_real_session_is_a_notice():
    items = HistoryView().extend(load_session(FIXTURE).messages)
    notices = [i for i in items if isinstance(i, NoticeItem) and i.text.startswith("background task")]
    assert [n.text for n in notices] == [NOTICE]
    assert not [i for i in items if isinstance(i, UserItem) and "<task-notification>" in i.text]
    assert [i.text for i in items if isinstance(i, UserItem)] == ["inspect the project", "wait for the job"]


def test_the_notice_is_one_line_of_the_tagged_fields():
    text = (
        "<task-notification>\n<task-id>t1</task-id>\n<tool-use-id>toolu_1</tool-use-id>\n"
        "<output-file>/tmp/x.output</output-file>\n<status>failed</status>\n"
        "<summary>Background command\n  exited 2</summary>\n</task-notification>"
    )
    assert task_notice(text) == "background task t1 failed: Background command exited 2"
    assert task_notice("<task-notification><task-id>t2</task-id></task-notification>") == "background task t2 reported"
    long = task_notice("<task-notification><summary>" + "x" * 500 + "</summary></task-notification>")
    assert long is not None and len(long) == 200 and long.endswith("…") and "\n" not in long
    # Typed text that merely mentions the tag is the user's.
    assert task_notice("what is a <task-notification>?") is None
    view = HistoryView()
    view.add(UserMessage(content="what is a <task-notification>?"))
    assert isinstance(view.items[-1], UserItem)


async def test_the_app_shows_the_notice_and_no_raw_tags(tmp_path: Path):
    session = fixed_session(load_session(FIXTURE).messages, cwd=tmp_path, home=tmp_path / "home")
    app = AgentApp(StaticLauncher(session), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(120, 50), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        notices = [str(v.render()) for v in app.conversation.query(NoticeView)]
        assert NOTICE in notices
        typed = [str(v.item.text) for v in app.conversation.query(UserMessageView)]
        assert typed == ["inspect the project", "wait for the job"]
