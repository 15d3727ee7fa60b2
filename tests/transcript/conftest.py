"""A realistic session (every message kind and side record) and helpers to write raw JSONL."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_repl.core.model.messages import (
    AssistantMessage,
    DocumentBlock,
    ImageBlock,
    RedactedThinkingBlock,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from agent_repl.transcript.records import (
    CacheEditRecord,
    CollapseCommitRecord,
    CollapseStageRecord,
    CompactionUndoRecord,
    ContentReplacementRecord,
    MicrocompactClearRecord,
    RewindRecord,
    ServerClearRecord,
    SessionMemoryRecord,
    SessionMetaRecord,
    SideRecord,
    SnipRecord,
    StagedSpan,
    TokenCountsRecord,
    TokenRatioRecord,
)

SESSION_ID = "9d1c3a52-6b7e-4f80-a1b2-c3d4e5f6a7b8"
PROMPT = "Count the lines in notes.txt and tell me which one is longest"
PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

_clock = iter(f"2026-02-03T10:{m:02d}:{s:02d}.000Z" for m in range(60) for s in range(0, 60, 5))


def _ts() -> str:
    return next(_clock)


def realistic_session() -> list[UserMessage | AssistantMessage | SystemMessage | SideRecord]:
    """What a session writes, in order: a tool turn, an API error, a compaction, more turns,
    the side records of the context pipeline."""
    usage = Usage(
        input_tokens=12, cache_creation_input_tokens=4800, cache_read_input_tokens=15000, output_tokens=96
    )
    s = SESSION_ID
    return [
        UserMessage(content=PROMPT, session_id=s, timestamp=_ts()),
        SessionMetaRecord(
            values={"model": "claude-sonnet-4-5-20250929", "title": "Longest line"}, session_id=s
        ),
        AssistantMessage(
            message_id="msg_01AAA",
            model="claude-sonnet-4-5-20250929",
            session_id=s,
            timestamp=_ts(),
            content=[ThinkingBlock(thinking="wc -l, then awk for the longest", signature="c2lnbmF0dXJl")],
            usage=usage,
            request_id="req_01AAA",
        ),
        AssistantMessage(
            message_id="msg_01AAA",
            model="claude-sonnet-4-5-20250929",
            session_id=s,
            timestamp=_ts(),
            content=[
                ToolUseBlock(
                    id="toolu_01Bash", name="Bash", input={"command": "wc -l notes.txt", "timeout": None}
                )
            ],
            stop_reason="tool_use",
            usage=usage,
            request_id="req_01AAA",
        ),
        UserMessage(
            session_id=s,
            timestamp=_ts(),
            content=[ToolResultBlock(tool_use_id="toolu_01Bash", content="42 notes.txt")],
            tool_use_result={"stdout": "42 notes.txt", "stderr": "", "interrupted": False, "isImage": False},
        ),
        ContentReplacementRecord(
            tool_use_id="toolu_01Bash",
            session_id=s,
            replacement="<persisted-output>\nOutput too large (1.2 MB). Full output saved to: /x/tool-results/toolu_01Bash.txt\n\nPreview (first 2.0 KB):\n42 notes.txt\n...\n</persisted-output>",
        ),
        SystemMessage(
            subtype="api_error",
            level="error",
            session_id=s,
            timestamp=_ts(),
            content="API error: overloaded",
            metadata={
                "retryInMs": 572.5,
                "retryAttempt": 1,
                "maxRetries": 10,
                "error": {"type": "overloaded_error"},
            },
        ),
        AssistantMessage(
            message_id="msg_01BBB",
            model="claude-sonnet-4-5-20250929",
            session_id=s,
            timestamp=_ts(),
            content=[TextBlock(text="notes.txt has 42 lines; line 7 is the longest.")],
            stop_reason="end_turn",
            usage=usage,
            request_id="req_01BBB",
        ),
        SnipRecord(uuids=["u-1", "u-2"], source="model", tokens_freed=1200, session_id=s),
        SystemMessage(
            subtype="compact_boundary",
            session_id=s,
            timestamp=_ts(),
            content="Conversation compacted",
            metadata={"trigger": "auto", "preTokens": 167731},
        ),
        UserMessage(
            session_id=s,
            timestamp=_ts(),
            is_compact_summary=True,
            content="This session is being continued from a previous conversation that ran out of context. "
            "The summary below covers the earlier portion of the conversation.\n\nAnalysis: ...",
        ),
        UserMessage(
            session_id=s,
            timestamp=_ts(),
            is_meta=True,
            content="<system-reminder>notes.txt changed</system-reminder>",
        ),
        UserMessage(
            session_id=s,
            timestamp=_ts(),
            content=[
                TextBlock(text="And this screenshot?"),
                ImageBlock(source={"type": "base64", "media_type": "image/png", "data": PNG_1PX}),
            ],
        ),
        AssistantMessage(
            message_id="msg_01CCC",
            model="claude-sonnet-4-5-20250929",
            session_id=s,
            timestamp=_ts(),
            content=[RedactedThinkingBlock(data="ZW5jcnlwdGVk")],
            usage=usage,
            request_id="req_01CCC",
        ),
        AssistantMessage(
            message_id="msg_01CCC",
            model="claude-sonnet-4-5-20250929",
            session_id=s,
            timestamp=_ts(),
            content=[ToolUseBlock(id="toolu_01Read", name="Read", input={"file_path": "/tmp/p/spec.pdf"})],
            stop_reason="tool_use",
            usage=usage,
            request_id="req_01CCC",
        ),
        UserMessage(
            session_id=s,
            timestamp=_ts(),
            content=[
                ToolResultBlock(
                    tool_use_id="toolu_01Read",
                    is_error=True,
                    content=[
                        TextBlock(text="partial"),
                        DocumentBlock(
                            source={"type": "text", "media_type": "text/plain", "data": "x"}, title="spec"
                        ),
                    ],
                )
            ],
        ),
        AssistantMessage(
            message_id="msg_synthetic_1",
            model="<synthetic>",
            is_synthetic=True,
            session_id=s,
            timestamp=_ts(),
            content=[TextBlock(text="[Request interrupted by user]")],
        ),
        CollapseCommitRecord(
            collapse_id="c1", start_uuid="u-3", end_uuid="u-9", summary="Read three files.", session_id=s
        ),
        CollapseStageRecord(
            spans=[
                StagedSpan(
                    collapse_id="c2", start_uuid="u-10", end_uuid="u-12", summary="Ran a test.",
                    uuids=["u-10", "u-11", "u-12"],
                )
            ],
            session_id=s,
        ),
        TokenRatioRecord(ratio=1.4123, tokenizer_ratio=1.39, session_id=s),
        TokenCountsRecord.of([("0f1e2d3c4b5a6978", 2_480, 611)]).model_copy(update={"session_id": s}),
        MicrocompactClearRecord(
            tool_use_ids=["toolu_01Bash"], trigger="time", tokens_saved=300, session_id=s
        ),
        CacheEditRecord(anchor_uuid="u-9", tool_use_ids=["toolu_01Read"], session_id=s),
        ServerClearRecord(tool_use_ids=["toolu_01Read"], tokens_saved=1200, trigger="pays", session_id=s),
        CompactionUndoRecord(boundary_uuid="u-b", excluded_uuids=["u-b", "u-s"], session_id=s),
        RewindRecord(
            prompt_uuid="u-9", restore="both", excluded_uuids=["u-9", "u-10"], files_restored=["a.py"], session_id=s
        ),
        SessionMemoryRecord(
            content="1. Primary Request and Intent:\n   Count the lines", last_summarized_uuid="u-9",
            tokens_at_extraction=12_000, session_id=s,
        ),
        SystemMessage(
            subtype="microcompact_boundary",
            session_id=s,
            timestamp=_ts(),
            content="Context microcompacted",
            metadata={
                "trigger": "auto",
                "preTokens": 71221,
                "tokensSaved": 34078,
                "compactedToolIds": ["toolu_01Bash"],
            },
        ),
        SystemMessage(
            subtype="local_command",
            session_id=s,
            timestamp=_ts(),
            content="<command-name>/context</command-name>",
        ),
        SystemMessage(
            subtype="informational",
            level="warning",
            session_id=s,
            timestamp=_ts(),
            content="Model switched",
            metadata={"from": "a", "to": "b"},
        ),
        UserMessage(session_id=s, timestamp=_ts(), content="thanks"),
        AssistantMessage(
            message_id="msg_01DDD",
            model="claude-sonnet-4-5-20250929",
            session_id=s,
            timestamp=_ts(),
            content=[TextBlock(text="You're welcome.")],
            stop_reason="end_turn",
            usage=Usage(
                input_tokens=3,
                cache_read_input_tokens=21000,
                output_tokens=5,
                ephemeral_1h_input_tokens=7,
                cache_deleted_input_tokens=2,
            ),
            request_id="req_01DDD",
        ),
    ]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder, its path resolved as a session's cwd is."""
    cwd = tmp_path / "project"
    cwd.mkdir()
    return cwd.resolve()


@pytest.fixture
def session_items() -> list[Any]:
    return realistic_session()


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[..., Path]:
    """Write records (dicts, or raw strings written verbatim) as lines of a new file."""

    def write(
        lines: list[dict[str, Any] | str], name: str = "s.jsonl", *, final_newline: bool = True
    ) -> Path:
        path = tmp_path / name
        text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
        path.write_text(text + ("\n" if final_newline else ""), encoding="utf-8")
        return path

    return write


def cc_record(kind: str, uuid: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    """A record as Claude Code writes it."""
    record: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/p",
        "sessionId": "cc-1",
        "version": "2.1.22",
        "gitBranch": "main",
        "type": kind,
        "uuid": uuid,
        "timestamp": "2026-01-28T23:20:33.354Z",
    }
    record.update(fields)
    return record


def cc_user(uuid: str, parent: str | None, content: Any, **fields: Any) -> dict[str, Any]:
    return cc_record("user", uuid, parent, message={"role": "user", "content": content}, **fields)


def cc_assistant(
    uuid: str, parent: str | None, message_id: str, block: dict[str, Any], **fields: Any
) -> dict[str, Any]:
    message = {
        "model": "claude-opus-4-5-20251101",
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": [block],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 3,
            "cache_creation_input_tokens": 10,
            "cache_read_input_tokens": 5,
            "output_tokens": 1,
        },
    }
    return cc_record("assistant", uuid, parent, message=message, requestId="req_" + message_id, **fields)


class CCRecords:
    """Builders for Claude Code-shaped records, handed to tests as the `cc` fixture."""

    record = staticmethod(cc_record)
    user = staticmethod(cc_user)
    assistant = staticmethod(cc_assistant)


@pytest.fixture
def cc() -> type[CCRecords]:
    return CCRecords
