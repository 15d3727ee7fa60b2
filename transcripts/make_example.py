"""Writes `example-session.jsonl` through the real TranscriptWriter.

    .venv/bin/python -m transcripts.make_example     (from the repo root)

A test (tests/transcript/test_example_session.py) checks that the committed file is exactly what
this script writes, so the example always shows the schema the writer produces.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

import agent_repl
from agent_repl.core.model.messages import (
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from agent_repl.transcript.paths import SessionPaths
from agent_repl.transcript.records import SessionMetaRecord
from agent_repl.transcript.writer import TranscriptWriter

SESSION_ID = "3f2b8c1e-7d4a-4e59-9b6f-0a1c2d3e4f50"
CWD = Path("/home/dev/hello-project")
MODEL = "claude-sonnet-4-5-20250929"
HELLO_PY = 'def greet(name):\n    return f"Hello, {name}!"\n\n\nprint(greet("world"))\n'


def _numbered(text: str) -> str:
    return "".join(f"{n:>6}\u2192{line}\n" for n, line in enumerate(text.splitlines(), start=1))


def example_messages() -> list[UserMessage | AssistantMessage]:
    first_usage = Usage(
        input_tokens=4, cache_creation_input_tokens=5021, output_tokens=71, ephemeral_5m_input_tokens=5021
    )
    second_usage = Usage(
        input_tokens=6, cache_read_input_tokens=5021, cache_creation_input_tokens=187, output_tokens=58
    )
    read_path = str(CWD / "hello.py")
    return [
        UserMessage(
            uuid="0b7e4d2a-1c3f-4a5b-8e9d-6f7a8b9c0d1e",
            timestamp="2026-01-20T09:15:02.118Z",
            content="What does hello.py print when I run it?",
        ),
        AssistantMessage(
            uuid="1c8f5e3b-2d4a-4b6c-9fa0-7a8b9c0d1e2f",
            timestamp="2026-01-20T09:15:04.530Z",
            message_id="msg_01HxQ7bV2kLmN3pR4sT5uW6y",
            model=MODEL,
            content=[TextBlock(text="I'll read the file first.")],
            usage=first_usage,
            request_id="req_011CXa1b2c3d4e5f6g7h8i9j",
        ),
        AssistantMessage(
            uuid="2d9a6f4c-3e5b-4c7d-8ab1-8b9c0d1e2f3a",
            timestamp="2026-01-20T09:15:04.912Z",
            message_id="msg_01HxQ7bV2kLmN3pR4sT5uW6y",
            model=MODEL,
            content=[
                ToolUseBlock(id="toolu_01Ab2Cd3Ef4Gh5Ij6Kl7Mn8P", name="Read", input={"file_path": read_path})
            ],
            stop_reason="tool_use",
            usage=first_usage,
            request_id="req_011CXa1b2c3d4e5f6g7h8i9j",
        ),
        UserMessage(
            uuid="3e0b7a5d-4f6c-4d8e-9bc2-9c0d1e2f3a4b",
            timestamp="2026-01-20T09:15:04.977Z",
            content=[
                ToolResultBlock(tool_use_id="toolu_01Ab2Cd3Ef4Gh5Ij6Kl7Mn8P", content=_numbered(HELLO_PY))
            ],
            tool_use_result={
                "type": "text",
                "file": {
                    "filePath": read_path,
                    "content": HELLO_PY,
                    "numLines": 5,
                    "startLine": 1,
                    "totalLines": 5,
                },
            },
        ),
        AssistantMessage(
            uuid="4f1c8b6e-5a7d-4e9f-8cd3-0d1e2f3a4b5c",
            timestamp="2026-01-20T09:15:07.305Z",
            message_id="msg_01JyR8cW3mNoP4qS5tU6vX7z",
            model=MODEL,
            content=[
                TextBlock(
                    text='It prints `Hello, world!`: `greet("world")` returns the f-string '
                    '`"Hello, world!"` and the last line prints it.'
                )
            ],
            stop_reason="end_turn",
            usage=second_usage,
            request_id="req_011CXa2c3d4e5f6g7h8i9j0k",
        ),
    ]


async def write_example(home: Path, version: str | None = None) -> Path:
    """Write the example session under `home` and return its transcript path."""
    paths = SessionPaths(home=home, cwd=CWD, session_id=SESSION_ID)
    async with TranscriptWriter(
        paths, git_branch="main", version=version or agent_repl.__version__
    ) as writer:
        messages = example_messages()
        await writer.append_message(messages[0])
        await writer.append_record(
            SessionMetaRecord(
                values={"model": MODEL, "title": "What hello.py prints"}, timestamp=messages[0].timestamp
            )
        )
        for msg in messages[1:]:
            await writer.append_message(msg)
    return paths.transcript


def main() -> None:
    target = Path(__file__).resolve().parent / "example-session.jsonl"
    with tempfile.TemporaryDirectory() as tmp:
        written = asyncio.run(write_example(Path(tmp)))
        shutil.copyfile(written, target)
    sys.stdout.write(f"wrote {target}\n")


if __name__ == "__main__":
    main()
