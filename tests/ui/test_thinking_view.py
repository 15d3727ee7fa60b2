"""Thinking in the app, fed event by event: it shows dimmed while it streams (its last lines), the
finished thought takes that place, and a thought cut short by an interruption leaves nothing behind."""

from __future__ import annotations

from agent_repl.core.model.events import AssistantMessageEvent, ThinkingDelta, TurnEnded
from agent_repl.core.model.messages import AssistantMessage, ThinkingBlock, Usage
from agent_repl.ui.app import AgentApp
from agent_repl.ui.widgets.messages import StreamingThinkingView, ThinkingView

from .conftest import StaticLauncher, fixed_session
from .helpers import names, wait_for


def thought(uuid: str, text: str) -> AssistantMessage:
    return AssistantMessage(
        uuid=uuid, message_id="msg_t", model="claude-sonnet-5-5", content=[ThinkingBlock(thinking=text, signature="s")]
    )


def kinds(app: AgentApp) -> list[str]:
    return [type(w).__name__ for w in app.conversation.children if isinstance(w, ThinkingView | StreamingThinkingView)]


async def test_thinking_streams_dimmed_then_the_finished_thought_takes_its_place(tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    session = fixed_session([], cwd=project, home=tmp_path / "home")
    app = AgentApp(StaticLauncher(session), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        conversation = app.conversation
        for part in ["First I list ", "the files.\nThen I read ", "the readme.\nThen I check\nthe tests."]:
            await conversation.apply(ThinkingDelta(text=part))
        await pilot.pause()
        [streaming] = [w for w in conversation.children if isinstance(w, StreamingThinkingView)]
        shown = str(streaming.render())
        assert "the tests." in shown and "First I list" not in shown  # the last three lines only

        message = thought("t-1", "First I list the files.\nThen I read the readme.\nThen I check\nthe tests.")
        await conversation.apply(AssistantMessageEvent(message=message))
        await pilot.pause()
        assert kinds(app) == ["ThinkingView"]

        # Interrupted mid-thought: the streamed part goes, nothing half-drawn stays.
        await conversation.apply(ThinkingDelta(text="Half a tho"))
        assert kinds(app) == ["ThinkingView", "StreamingThinkingView"]
        await conversation.apply(TurnEnded(reason="interrupted", num_requests=1, usage=Usage()))
        await pilot.pause()
        assert kinds(app) == ["ThinkingView"]
