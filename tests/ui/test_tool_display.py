"""The screen shows a tool call as its tool's display declares it, looked up by name in the
displays the front end is given; a name it does not know (an MCP tool) gets the default."""

from __future__ import annotations

from collections.abc import Mapping
from io import StringIO
from typing import Any

from rich.console import Console

from agent_repl.core.model.events import ToolResultEvent, ToolUseStarted
from agent_repl.core.tooling.display import BodyKind, FileChangeDisplay, ToolDisplay, ToolDisplays
from agent_repl.tools import builtin_tools
from agent_repl.ui import tool_render
from agent_repl.ui.history_view import HistoryView, ToolItem
from agent_repl.ui.inline import InlineRenderer

from .helpers import tool_result, tool_use

BUILTIN = ToolDisplays({tool.name: tool.display for tool in builtin_tools()})


def _call(displays: ToolDisplays, name: str, tool_input: dict[str, Any], text: str, structured: Any = None) -> ToolItem:
    view = HistoryView(displays=displays)
    items = view.extend([tool_use("a", "t1", name, tool_input), tool_result("r", "t1", text, structured=structured)])
    [item] = [i for i in items if isinstance(i, ToolItem)]
    return item


def test_a_builtin_tool_shows_its_declared_summary_and_an_unknown_one_its_first_line():
    structured = {"type": "text", "file": {"filePath": "/p/a.py", "numLines": 3}}
    read = _call(BUILTIN, "Read", {"file_path": "/p/a.py"}, "     1→a\n     2→b\n     3→c", structured)
    assert tool_render.headline(read.call) == "Read(/p/a.py)"
    assert tool_render.outcome(read.call) == "Read 3 lines"

    mcp = _call(BUILTIN, "mcp__notes__get", {"id": "n1"}, "first line\nsecond", {"file": {"numLines": 3}})
    assert tool_render.headline(mcp.call) == 'mcp__notes__get(id: "n1")'
    assert tool_render.outcome(mcp.call) == "first line"
    assert not tool_render.opens_expanded(mcp.call)


class _PatchDisplay(FileChangeDisplay):
    """A tool the UI has never heard of that changes a file."""

    def asked_hunks(self, tool_input: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        return [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["-old", "+new"]}]


class _ShoutDisplay(ToolDisplay):
    def headline(self, name: str, tool_input: Mapping[str, Any], width: int = 90) -> str:
        return f"{name.upper()}!"

    def summary(self, tool_input: Mapping[str, Any], structured: Any) -> str | None:
        return "shouted"


def test_the_body_kind_and_summary_come_from_the_declaration_not_the_name():
    displays = ToolDisplays({"Patch": _PatchDisplay(), "Shout": _ShoutDisplay()})
    patch = _call(displays, "Patch", {"file_path": "/p/a.txt"}, "ok")
    assert patch.call.display.body is BodyKind.DIFF
    assert tool_render.opens_expanded(patch.call)
    assert tool_render.outcome(patch.call) == "Updated /p/a.txt: 1 line added, 1 line removed"

    shout = _call(displays, "Shout", {}, "ok")
    assert tool_render.header(shout.call).plain == "● SHOUT! shouted"
    # The same name without the declaration is shown the default way.
    plain = _call(ToolDisplays(), "Shout", {}, "ok")
    assert tool_render.header(plain.call).plain == "● Shout() ok"


def test_the_inline_renderer_uses_the_displays_it_was_given():
    out = StringIO()
    renderer = InlineRenderer(Console(file=out, width=100, color_system=None), BUILTIN)
    renderer.render(ToolUseStarted(tool_use_id="t1", name="TodoWrite", input={"todos": []}))
    message = tool_result("r", "t1", "updated", structured={"oldTodos": [], "newTodos": []})
    renderer.render(ToolResultEvent(tool_use_id="t1", name="TodoWrite", is_error=False, summary="", message=message))
    assert out.getvalue().splitlines()[:2] == ["● TodoWrite(0 items)", "  ⎿ 0 todos, 0 done"]


def _plain(renderable: Any) -> str:
    console = Console(file=StringIO(), width=100, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


async def test_a_collapsed_block_draws_its_body_when_first_opened(monkeypatch):
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    from agent_repl.ui.history_view import CompactItem
    from agent_repl.ui.widgets.compact_divider import CompactDivider
    from agent_repl.ui.widgets.tool_block import ToolBlock

    drawn: list[str] = []
    real_body = tool_render.body

    def counted_body(call: tool_render.ToolCall) -> Any:
        drawn.append(call.name)
        return real_body(call)

    monkeypatch.setattr(tool_render, "body", counted_body)
    bash = _call(BUILTIN, "Bash", {"command": "ls"}, "alpha.txt\nbeta.txt")
    summary = CompactItem(["b1"], summary="## Summary\nWe read the build log.")

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield ToolBlock(bash)
            yield CompactDivider(summary)

    async with Host().run_test(size=(80, 24)) as pilot:
        block, divider = pilot.app.query_one(ToolBlock), pilot.app.query_one(CompactDivider)
        assert block.collapsed and divider.collapsed
        assert drawn == []  # nothing drawn for what is not shown
        block.collapsed = False
        divider.collapsed = False
        await pilot.pause()
        assert drawn == ["Bash"]
        assert "beta.txt" in _plain(block.query_one(".tool-body", Static).content)
        assert "We read the build log." in _plain(divider.query_one(".compact-summary", Static).content)
        block.collapsed = True
        block.collapsed = False
        await pilot.pause()
        assert drawn == ["Bash"]  # drawn once, not at each opening
