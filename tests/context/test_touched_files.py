"""The list of paths the tool calls named before a compaction (agent_repl.context.touched_files)."""

from __future__ import annotations

import itertools
from typing import Any

from agent_repl.context.touched_files import paths_named, touched_files_reminder
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

_IDS = itertools.count()


def _call(name: str, *, error: bool = False, reported: Any = None, **arguments: object) -> list[Message]:
    """A tool call and its result (an error when `error`; `reported`: the tool's structured result)."""
    use = ToolUseBlock(id=f"toolu_{name}_{next(_IDS)}", name=name, input=arguments)
    result = ToolResultBlock(tool_use_id=use.id, content="failed" if error else "ok", is_error=error)
    return [AssistantMessage(message_id=f"msg_{use.id}", content=[use]),
            UserMessage(content=[result], tool_use_result=reported)]  # fmt: skip


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
    kept = [UserMessage(content="go on"), *_call("Read", file_path="/repo/src")]
    reminder = touched_files_reminder([*read, *grep, *kept], kept)
    assert "- /repo/old.py" in reminder and "- /repo/src" not in reminder
    many = [m for i in range(5) for m in _call("Read", file_path=f"/repo/f{i}.py")]
    short = touched_files_reminder(many, [], max_paths=2)
    assert short.index("/repo/f4.py") < short.index("/repo/f3.py") and "/repo/f0.py" not in short
    assert "(and 3 older ones)" in short
    assert touched_files_reminder(kept, kept) == ""


def test_a_refused_or_unanswered_call_names_nothing_and_a_command_that_failed_still_does():
    refused_read = _call("Read", error=True, reported="denied: Read with '/home/u/.ssh/id_ed25519'",
                         file_path="/home/u/.ssh/id_ed25519")  # fmt: skip
    refused_bash = _call("Bash", error=True, reported="denied: Bash", command="cat ~/.aws/credentials.txt")
    refused_grep = _call("Grep", error=True, pattern="KEY", path="/etc/secrets")
    unanswered = _call("Read", file_path="/home/u/notes.md")[:1]
    failed_test = _call("Bash", error=True, reported={"stdout": "1 failed", "returnCode": 1},
                        command="pytest tests/test_engine.py")  # fmt: skip
    history = [*refused_read, *refused_bash, *refused_grep, *unanswered, *failed_test]
    reminder = touched_files_reminder(history, [])
    assert "tests/test_engine.py" in reminder
    for path in ("id_ed25519", "credentials", "/etc/secrets", "notes.md"):
        assert path not in reminder
    assert touched_files_reminder([*refused_read, *refused_bash], []) == ""
