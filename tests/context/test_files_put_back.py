"""Which files a compaction puts back (docs/architecture.md 5.6): those edited or written, and
those read in the latest turn unless the kept tail starts it; a file only read in an earlier,
finished turn is left to the summary and the list of paths."""

from __future__ import annotations

from pathlib import Path

from agent_repl.context.attachments import recently_read_files
from agent_repl.context.state import PipelineState
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from agent_repl.core.permissions.rules import PermissionPolicy


def use(tool_id: str, name: str, path: Path) -> AssistantMessage:
    return AssistantMessage(message_id=tool_id, content=[ToolUseBlock(id=tool_id, name=name, input={"file_path": str(path)})])


def done(tool_id: str) -> UserMessage:
    return UserMessage(content=[ToolResultBlock(tool_use_id=tool_id, content="ok")])


def project(tmp_path: Path) -> dict[str, Path]:
    files = {name: tmp_path / f"{name}.py" for name in ("early", "edited", "latest")}
    for name, path in files.items():
        path.write_text(f"{name.upper()}_MARK = 1\n")
    return files


def earlier_turns(files: dict[str, Path]) -> list[Message]:
    return [
        UserMessage(content="look at early"),
        use("t1", "Read", files["early"]),
        done("t1"),
        UserMessage(content="change edited"),
        use("t2", "Edit", files["edited"]),
        done("t2"),
    ]


def put_back(summarized: list[Message], kept: list[Message], tmp_path: Path) -> list[str]:
    policy = PermissionPolicy.from_rules([], [], roots=[tmp_path])
    return [Path(f.path).stem for f in recently_read_files(summarized, kept, PipelineState(), policy)]


def test_at_a_turns_start_only_edited_files_come_back(tmp_path: Path) -> None:
    files = project(tmp_path)
    summarized = [*earlier_turns(files), UserMessage(content="read latest"), use("t3", "Read", files["latest"]), done("t3")]
    assert put_back(summarized, [UserMessage(content="a new question")], tmp_path) == ["edited"]


def test_within_a_turn_its_reads_come_back_with_the_edited_files(tmp_path: Path) -> None:
    files = project(tmp_path)
    summarized = [*earlier_turns(files), UserMessage(content="read latest"), use("t3", "Read", files["latest"]), done("t3")]
    kept = [use("t4", "Read", files["early"]), done("t4")]  # the turn goes on in the kept tail
    assert put_back(summarized, kept, tmp_path) == ["latest", "edited"]
