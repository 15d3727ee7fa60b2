"""The extractive summary of a collapsed span: verbatim user messages, one line per tool call."""

from __future__ import annotations

from agent_repl.context.collapse_summary import outcome_line, summarize_span, tool_call_line
from agent_repl.context.state import CLEARED_TOOL_RESULT
from agent_repl.core.model.messages import (
    AssistantMessage,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

PNG = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}


def use(name: str, **tool_input: object) -> ToolUseBlock:
    return ToolUseBlock(id=f"id-{name}", name=name, input=dict(tool_input))


def test_a_tool_call_shows_its_key_input():
    assert (
        tool_call_line(use("Bash", command="ls -la /tmp\necho done", description="list"))
        == "Bash ls -la /tmp echo done"
    )
    assert tool_call_line(use("Read", file_path="/src/a.py", limit=20)) == "Read /src/a.py"
    assert tool_call_line(use("Grep", pattern="def ", path="/src", output_mode="content")) == "Grep def /src"
    assert tool_call_line(use("WebFetch", prompt="what is it")) == "WebFetch what is it"
    assert tool_call_line(use("Bash", command="x" * 500)).endswith("…")


def test_an_outcome_is_one_line():
    assert outcome_line(None) == "no result"
    error = ToolResultBlock(tool_use_id="a", content="\nExit code 2\nls: cannot access 'nope'", is_error=True)
    assert outcome_line(error) == "error: Exit code 2"
    listing = ToolResultBlock(tool_use_id="a", content="a\nb\nc")
    assert outcome_line(listing, {"returnCode": 0}) == "exit 0, 3 lines"
    assert outcome_line(listing) == "3 lines"
    assert outcome_line(ToolResultBlock(tool_use_id="a", content="Found 2 files")) == "Found 2 files"
    assert outcome_line(ToolResultBlock(tool_use_id="a", content="")) == "no output"
    assert outcome_line(ToolResultBlock(tool_use_id="a", content=CLEARED_TOOL_RESULT)) == "output cleared"
    persisted = ToolResultBlock(
        tool_use_id="a",
        content="<persisted-output>\nOutput too large (1.2 MB). Full output saved to: /t/r/a.txt\n\nPreview\n</persisted-output>",
    )
    assert outcome_line(persisted) == "large output, saved to /t/r/a.txt"
    image = ToolResultBlock(tool_use_id="a", content=[TextBlock(text="a picture"), ImageBlock(source=PNG)])
    assert outcome_line(image) == "a picture, an image"


def test_the_summary_quotes_users_and_shortens_the_rest():
    prompt = 'Fix the "parser"\n  keep the indentation — exactly as typed  '
    entries: list[Message] = [
        UserMessage(content=prompt),
        AssistantMessage(message_id="m", content=[ThinkingBlock(thinking="secret plan", signature="s")]),
        AssistantMessage(message_id="m", content=[TextBlock(text="Let me look. " * 40)]),
        AssistantMessage(message_id="m", content=[use("Bash", command="pytest -q")]),
        UserMessage(
            content=[ToolResultBlock(tool_use_id="id-Bash", content="1 failed\n3 passed")],
            tool_use_result={"returnCode": 1},
        ),
        UserMessage(content=[TextBlock(text="see this"), ImageBlock(source=PNG)]),
        AssistantMessage(message_id="n", content=[TextBlock(text="Fixed.")]),
    ]
    summary = summarize_span(entries)
    lines = summary.splitlines()
    assert lines[0].startswith("Earlier part of this conversation, summarized (7 entries")
    assert f"User: {prompt}" in summary
    assert "secret plan" not in summary
    assistant = next(line for line in lines if line.startswith("Assistant: Let me look."))
    assert assistant.endswith("…") and len(assistant) < 140
    assert "- Bash pytest -q -> exit 1, 2 lines" in lines
    assert "User: see this\n[1 image]" in summary
    assert lines[-1] == "Assistant: Fixed."
