"""After a compaction, the error still being worked on comes back (unless settled or quoted)."""

from __future__ import annotations

from agent_repl.context.attachments import MAX_ERROR_CHARS, error_reminder
from agent_repl.core.model.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage


def call(tool_id: str, name: str) -> AssistantMessage:
    return AssistantMessage(message_id=f"m-{tool_id}", content=[ToolUseBlock(id=tool_id, name=name, input={})])


def result(tool_id: str, text: str, error: bool) -> UserMessage:
    return UserMessage(content=[ToolResultBlock(tool_use_id=tool_id, content=text, is_error=error)])


FAILED = [call("t1", "Bash"), result("t1", "pytest: 3 failed, AssertionError in test_parse", True)]


def test_an_open_error_comes_back_with_its_tool():
    reminder = error_reminder(FAILED, [], "The user wants the parser fixed.")
    assert "AssertionError in test_parse" in reminder and "from Bash" in reminder


def test_a_later_success_of_the_same_tool_settles_it():
    settled = [*FAILED, call("t2", "Bash"), result("t2", "all passed", False)]
    assert error_reminder(settled, [], "") == ""
    assert error_reminder(FAILED, settled[2:], "") == ""


def test_a_success_of_another_tool_does_not():
    other = [*FAILED, call("t2", "Read"), result("t2", "file text", False)]
    assert "AssertionError" in error_reminder(other, [], "")


def test_an_error_the_summary_quotes_or_the_kept_tail_shows_is_not_repeated():
    assert error_reminder(FAILED, [], "4. Errors: pytest: 3 failed,  AssertionError in test_parse") == ""
    assert error_reminder([], FAILED, "") == ""


def test_a_long_error_is_shortened_in_the_middle():
    text = "START " + "x" * 10_000 + " END"
    reminder = error_reminder([call("t1", "Bash"), result("t1", text, True)], [], "")
    assert "START" in reminder and "END" in reminder and len(reminder) < MAX_ERROR_CHARS + 400
