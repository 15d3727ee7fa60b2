"""The UI's headless parts: history items, prompt history, completion, context grid."""

from __future__ import annotations

from agent_repl.core.model.messages import SystemMessage
from agent_repl.ui.completion import complete
from agent_repl.ui.history_view import AssistantItem, CompactItem, HistoryView, NoticeItem, ToolItem, UserItem
from agent_repl.ui.prompt_history import PromptHistory
from agent_repl.ui.render import context_cells
from agent_repl.ui.tool_render import headline

from .helpers import assistant, compact_boundary, tool_result, tool_use, user


def test_history_items_pair_tool_calls_hide_meta_and_fold_the_compact_summary():
    view = HistoryView()
    preview = "<persisted-output>\nOutput too large (1.2 MB). Full output saved to: /x/t.txt\n\nPreview:\n1\n</persisted-output>"
    items = view.extend(
        [
            user("m", "env", is_meta=True),
            user("u1", "hi"),
            tool_use("a1", "t1", "Bash", {"command": "seq 1 9"}),
            tool_result("r1", "t1", preview),
            assistant("a2", "done"),
            compact_boundary("b", 1000),
            user("s", "the summary", is_compact_summary=True),
            user("x", "[Request interrupted by user]"),
            SystemMessage(uuid="e", subtype="api_error", content="API error 500", level="error"),
        ]
    )
    assert [type(i) for i in items] == [
        UserItem,
        ToolItem,
        AssistantItem,
        CompactItem,
        NoticeItem,
        NoticeItem,
    ]
    tool = items[1]
    assert (
        tool.uuids == ["a1", "r1"] and tool.persisted_path == "/x/t.txt" and tool.persisted_size == "1.2 MB"
    )
    assert headline(tool.call) == "Bash(seq 1 9)"
    assert items[3].summary == "the summary" and items[3].uuids == ["b", "s"]
    assert items[4].text == "interrupted" and items[5].level == "error"


def test_prompt_history_walks_back_and_keeps_the_draft(tmp_path):
    path = tmp_path / "h.jsonl"
    history = PromptHistory(path)
    history.append("first")
    history.append("second\nline")
    path.write_text(path.read_text() + "{torn")
    again = PromptHistory(path).load()
    assert again.entries == ["first", "second\nline"]
    assert again.previous("draft") == "second\nline"
    assert again.previous("") == "first"
    assert again.previous("") is None
    assert again.next() == "second\nline"
    assert again.next() == "draft"
    assert again.next() is None


def test_completion_of_commands_and_paths(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("")
    (tmp_path / "setup.cfg").write_text("")
    commands = ["/help", "/context", "/cost"]
    assert complete("/h", tmp_path, commands).replacement == "/help "
    found = complete("/co", tmp_path, commands)
    assert found.replacement == "/co" and found.candidates == ["/context", "/cost"]
    found = complete("look at s", tmp_path, commands)
    assert found.start == 8 and found.candidates == ["setup.cfg", "src/"]
    assert complete("look at src/m", tmp_path, commands).replacement == "src/main.py "
    assert complete("see @sr", tmp_path, commands).replacement == "@src/"
    assert complete("zzz", tmp_path, commands) is None


def test_the_context_grid_gives_each_used_category_a_square():
    cells = context_cells({"Tools": 10, "Messages": 500, "Free space": 1000}, 1000, cells=10)
    assert cells.count("Tools") == 1 and cells.count("Messages") == 5 and len(cells) == 10
