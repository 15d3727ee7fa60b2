"""A real Claude Code session resumed in the app: its Edit, MultiEdit and Write calls show as diffs
and its TodoWrite calls as checklists, not as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_repl.core.tooling.display import ToolDisplays
from agent_repl.tools import builtin_tools
from agent_repl.transcript.loader import load_session
from agent_repl.ui.app import AgentApp
from agent_repl.ui.history_view import ToolItem
from agent_repl.ui.tool_views import tool_body
from agent_repl.ui.widgets.tool_block import ToolBlock

from .conftest import StaticLauncher, fixed_session
from .helpers import names, wait_for

REAL = (
    Path(__file__).parents[3] / "shared" / "data" / "claude_code" / "claude_code_viewer"
    / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
)
pytestmark = pytest.mark.skipif(not REAL.is_file(), reason=f"shared Claude Code data not found at {REAL}")


def _plain(renderable) -> str:
    from rich.console import Console

    console = Console(width=120, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


DISPLAYS = ToolDisplays({tool.name: tool.display for tool in builtin_tools()})


def _assert_rendered(name: str, tool_input: dict, structured) -> None:
    body = tool_body(DISPLAYS.of(name), tool_input, structured)
    assert body is not None, name
    text = _plain(body)
    assert not text.lstrip().startswith("{"), (name, text[:200])
    if name == "TodoWrite":
        assert text.strip().splitlines()[0][:1] in "☐◐☒", text
    else:
        marks = [line.split(" ", 2)[1] for line in text.splitlines() if len(line.split(" ", 2)) > 1]
        assert "+" in marks or "-" in marks, (name, text[:300])


def test_every_file_change_and_todo_list_of_the_real_session_renders():
    """Every Edit, MultiEdit, Write and TodoWrite in the file, with its toolUseResult (all branches)."""
    uses: dict[str, dict] = {}
    rendered: dict[str, int] = {}
    for line in REAL.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "assistant":
            for block in record["message"]["content"]:
                if block.get("type") == "tool_use":
                    uses[block["id"]] = block
        elif record.get("type") == "user" and isinstance(record["message"]["content"], list):
            for block in record["message"]["content"]:
                use = uses.get(block.get("tool_use_id", "")) if block.get("type") == "tool_result" else None
                if use is None or use["name"] not in ("Edit", "MultiEdit", "Write", "TodoWrite") or block.get("is_error"):
                    continue
                _assert_rendered(use["name"], use["input"], record.get("toolUseResult"))
                rendered[use["name"]] = rendered.get(use["name"], 0) + 1
    assert rendered == {"Edit": 2, "MultiEdit": 1, "Write": 28, "TodoWrite": 19}, rendered


async def test_edits_show_as_diffs_and_todos_as_checklists(tmp_path: Path):
    loaded = load_session(REAL)
    session = fixed_session(loaded.messages, cwd=tmp_path, home=tmp_path / "home")
    app = AgentApp(StaticLauncher(session), animate=False, warm_client=False, max_lines=100_000)
    seen: list = []
    async with app.run_test(size=(120, 50), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        items = [i for i in app.conversation.view.items if isinstance(i, ToolItem)]
        assert {i.call.name for i in items} >= {"Write", "TodoWrite"}
        for item in items:
            if item.call.name in ("Edit", "MultiEdit", "Write", "TodoWrite"):
                _assert_rendered(item.call.name, dict(item.call.input), item.call.structured)

        blocks = list(app.conversation.query(ToolBlock))
        todo = next(b for b in reversed(blocks) if b.item.call.name == "TodoWrite")
        assert not todo.collapsed and "☒" in _plain(todo.query_one(".tool-body").render())
        write = next(b for b in reversed(blocks) if b.item.call.name == "Write")
        rendered = _plain(write.query_one(".tool-body").render())
        assert " + " in rendered and '"content"' not in rendered
