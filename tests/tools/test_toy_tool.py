"""Adding a tool, as tools/README.md describes it: an args model and a `Tool` subclass with its
display, handed to the session with the built-in ones. The scripted model calls it through the
real loop; the test checks it ran, what the API was told about it, and how the screen shows it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.model.events import ToolResultEvent, ToolUseStarted
from agent_repl.core.tooling.display import HEADLINE_WIDTH, ToolDisplay, one_line
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.tools import builtin_tools
from agent_repl.tools._common import ToolArgs
from tests.e2e.compaction_support import settings_for


class CountWordsArgs(ToolArgs):
    text: str = Field(description="The text whose words to count")


class CountWordsDisplay(ToolDisplay):
    def headline(self, name: str, tool_input: Mapping[str, Any], width: int = HEADLINE_WIDTH) -> str:
        return one_line(f"{name}({tool_input.get('text', '')})", width)

    def summary(self, tool_input: Mapping[str, Any], structured: Any) -> str | None:
        words = structured.get("words") if isinstance(structured, dict) else None
        return f"Counted {words} words" if isinstance(words, int) else None


class CountWords(Tool[CountWordsArgs]):
    name = "CountWords"
    args_model = CountWordsArgs
    description = "Count the words of a text."
    is_read_only: ClassVar[bool] = True
    display: ClassVar[ToolDisplay] = CountWordsDisplay()

    def __init__(self) -> None:
        self.calls: list[CountWordsArgs] = []

    async def run(self, args: CountWordsArgs, ctx: ToolContext) -> ToolOutput:
        self.calls.append(args)
        words = len(args.text.split())
        return ToolOutput(content=f"{words} words", structured={"words": words}, summary=f"{words} words")


async def test_a_toy_tool_runs_through_the_loop_and_shows_its_own_display(tmp_path: Path) -> None:
    toy = CountWords()
    call = {"name": "CountWords", "input": {"text": "one two three"}}
    server = EmulatorServer(policy=ScriptPolicy({"steps": [{"tools": [call]}, {"text": "Three words."}]}))
    server.start()
    session = await open_session(
        settings_for(server, tmp_path, autocompact=False), tmp_path, tools=[*builtin_tools(), toy]
    )
    try:
        events = [event async for event in session.run_turn("how many words?")]
    finally:
        await close_session(session)
        server.stop()

    assert [args.text for args in toy.calls] == ["one two three"]
    [started] = [e for e in events if isinstance(e, ToolUseStarted)]
    [result] = [e for e in events if isinstance(e, ToolResultEvent)]
    assert (started.name, result.name, result.is_error, result.summary) == ("CountWords", "CountWords", False, "3 words")

    # On the wire: the tool's definition in every request, its result in the second.
    first, second = (recording.body for recording in server.recordings.messages)
    [definition] = [t for t in first["tools"] if t["name"] == "CountWords"]
    assert definition == {
        "name": "CountWords",
        "description": "Count the words of a text.",
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text whose words to count"}},
            "required": ["text"],
            "additionalProperties": False,
        },
    }
    [tool_result] = [
        block
        for message in second["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert tool_result["tool_use_id"] == started.tool_use_id
    assert "3 words" in str(tool_result["content"])

    # On the screen: what the tool declared, looked up by its name.
    display = session.tool_displays.of("CountWords")
    assert display.headline("CountWords", started.input) == "CountWords(one two three)"
    assert display.summary(started.input, result.message.tool_use_result) == "Counted 3 words"
