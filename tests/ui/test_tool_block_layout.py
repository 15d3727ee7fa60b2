"""A tool block's title and body are drawn in the size of what they show now, whatever order the
screen's layout and the call's result come in.

Under load the screen can lay the conversation out between the moment a tool block is mounted and
the moment its title widget handles its own pending layout; a result that lands in that window
used to be drawn in the size measured for "running…": the title was cut just after the call, with
no outcome, for as long as the app stayed idle (tests/ui/test_tmux_screen.py under load). Each
test forces that order: the screen's layout runs right after the block is mounted, before the
block's widgets have had a turn of their own.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widget import Widget

from agent_repl.core.model.events import AssistantMessageEvent, ToolResultEvent
from agent_repl.core.tooling.display import ToolDisplays
from agent_repl.tools import builtin_tools
from agent_repl.ui.widgets.conversation import Conversation
from agent_repl.ui.widgets.tool_block import ToolBlock

from .helpers import tool_result, tool_use, user

DISPLAYS = ToolDisplays({tool.name: tool.display for tool in builtin_tools()})


class _ConversationApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Conversation()


def _drawn(widget: Widget) -> str:
    """The text the widget draws in the size the layout gave it."""
    return "\n".join(strip.text for strip in widget.render_lines(widget.region.size.region))


def _lay_out_now(app: App[None]) -> None:
    # What the screen's refresh timer does: lay every widget out, here before any of them ran.
    app.screen._refresh_layout()


async def test_a_result_that_lands_right_after_the_screen_was_laid_out_shows_in_the_title():
    app = _ConversationApp()
    async with app.run_test(size=(120, 30)) as pilot:
        conversation = app.query_one(Conversation)
        await conversation.load([user("u1", "print something odd")], displays=DISPLAYS)
        await pilot.pause()
        call = tool_use("a1", "t1", "Bash", {"command": "printf 'before\\033[2J\\033[Hafter\\n'"})
        await conversation.apply(AssistantMessageEvent(message=call))
        block = conversation.query_one(ToolBlock)
        _lay_out_now(app)
        assert "running…" in _drawn(block._title)
        result = tool_result("r1", "t1", "before\x1b[2J\x1b[Hafter")
        await conversation.apply(
            ToolResultEvent(tool_use_id="t1", name="Bash", is_error=False, summary="", message=result)
        )
        await pilot.pause()
        await pilot.pause()
        assert "Bash(printf 'before\\033[2J\\033[Hafter\\n') before␛[2J␛[Hafter" in _drawn(block._title)


async def test_a_diff_that_lands_right_after_the_screen_was_laid_out_is_drawn_whole():
    app = _ConversationApp()
    async with app.run_test(size=(120, 40)) as pilot:
        conversation = app.query_one(Conversation)
        await conversation.load([user("u1", "rename it")], displays=DISPLAYS)
        await pilot.pause()
        edit = {"file_path": "/p/a.txt", "old_string": "one", "new_string": "two"}
        await conversation.apply(AssistantMessageEvent(message=tool_use("a1", "t1", "Edit", edit)))
        block = conversation.query_one(ToolBlock)
        _lay_out_now(app)
        hunks = [
            {
                "oldStart": 1,
                "oldLines": 3,
                "newStart": 1,
                "newLines": 4,
                "lines": [" a", "-one", "+two", "+three", " b"],
            }
        ]
        structured = {
            "filePath": "/p/a.txt",
            "oldString": "one",
            "newString": "two",
            "structuredPatch": hunks,
        }
        result = tool_result("r1", "t1", "The file /p/a.txt has been updated.", structured=structured)
        await conversation.apply(
            ToolResultEvent(tool_use_id="t1", name="Edit", is_error=False, summary="", message=result)
        )
        await pilot.pause()
        await pilot.pause()
        body = _drawn(block._body_view)
        assert all(line in body for line in ("- one", "+ two", "+ three", "  b")), body
