"""The list of paths the tool calls named before a compaction (agent_repl.context.touched_files)."""

from __future__ import annotations

from agent_repl.context.touched_files import paths_named, touched_files_reminder
from agent_repl.core.messages import AssistantMessage, ToolUseBlock, UserMessage


def _call(name: str, **arguments: object) -> AssistantMessage:
    use = ToolUseBlock(id=f"toolu_{name}_{len(arguments)}", name=name, input=arguments)
    return AssistantMessage(message_id=f"msg_{use.id}", content=[use])


def test_a_call_names_its_path_arguments_and_the_files_in_its_command():
    grep = ToolUseBlock(id="t1", name="Grep", input={"pattern": "x", "path": "src/app"})
    assert paths_named(grep) == ["src/app"]
    command = "cd /repo && sed -n 1,20p src/a.py 2>/dev/null; cat ./notes.txt ~/.config/x.toml --out=r.json"
    use = ToolUseBlock(id="t2", name="Bash", input={"command": command})
    assert paths_named(use) == ["src/a.py", "./notes.txt", "~/.config/x.toml", "r.json"]
    assert paths_named(ToolUseBlock(id="t3", name="Bash", input={"command": "ls -la && git status"})) == []


def test_the_reminder_lists_the_earlier_paths_newest_first_and_leaves_out_the_kept_ones():
    read = _call("Read", file_path="/repo/old.py")
    grep = _call("Grep", pattern="def main", path="/repo/src")
    kept = [UserMessage(content="go on"), _call("Read", file_path="/repo/src")]
    reminder = touched_files_reminder([read, grep, *kept], kept)
    assert "- /repo/old.py" in reminder and "- /repo/src" not in reminder
    many = [_call("Read", file_path=f"/repo/f{i}.py") for i in range(5)]
    short = touched_files_reminder(many, [], max_paths=2)
    assert short.index("/repo/f4.py") < short.index("/repo/f3.py") and "/repo/f0.py" not in short
    assert "(and 3 older ones)" in short
    assert touched_files_reminder(kept, kept) == ""
