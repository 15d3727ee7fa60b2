"""The committed example session is exactly what the writer produces, and it resumes cleanly."""

import importlib.util
import json
from pathlib import Path

from agent_repl.core.model.messages import AssistantMessage, UserMessage
from agent_repl.transcript.loader import load_session

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "transcripts"
EXAMPLE = TRANSCRIPTS / "example-session.jsonl"


def load_script():
    spec = importlib.util.spec_from_file_location("make_example", TRANSCRIPTS / "make_example.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_example_is_what_the_writer_writes(tmp_path):
    committed = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    version = committed[0]["version"]  # the example may predate a version bump
    written = await load_script().write_example(tmp_path, version=version)
    assert written.read_text(encoding="utf-8") == EXAMPLE.read_text(encoding="utf-8"), (
        "transcripts/example-session.jsonl is stale: run .venv/bin/python -m transcripts.make_example"
    )


def test_example_resumes_as_a_tool_turn():
    loaded = load_session(EXAMPLE)
    assert loaded.warnings == []
    assert [type(m) for m in loaded.messages] == [
        UserMessage,
        AssistantMessage,
        AssistantMessage,
        UserMessage,
        AssistantMessage,
    ]
    prompt, _, tool_call, result, answer = loaded.messages
    assert prompt.content == "What does hello.py print when I run it?"
    assert tool_call.tool_uses()[0].name == "Read" and tool_call.message_id == loaded.messages[1].message_id
    assert result.tool_results()[0].tool_use_id == tool_call.tool_uses()[0].id
    assert "Hello, world!" in answer.text() and answer.stop_reason == "end_turn"
    assert loaded.metadata.title == "What hello.py prints" and loaded.leaf_uuid == answer.uuid
