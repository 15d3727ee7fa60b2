"""Real Claude Code transcripts: the shared data set (when present) and the fixtures cut from it."""

import json
from pathlib import Path

import pytest

from agent_repl.core.model.messages import AssistantMessage, SystemMessage, UserMessage
from agent_repl.transcript.loader import load_session

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "claude_code"
FIXTURES = Path(__file__).parent / "fixtures"
SHARED_FILES = sorted(SHARED.rglob("*.jsonl")) if SHARED.is_dir() else []


def assert_tools_paired(messages):
    """Every tool_use has exactly one later tool_result, and no result is orphaned."""
    open_uses: set[str] = set()
    for msg in messages:
        if isinstance(msg, AssistantMessage):
            open_uses.update(b.id for b in msg.tool_uses())
        elif isinstance(msg, UserMessage):
            for result in msg.tool_results():
                assert result.tool_use_id in open_uses, result.tool_use_id
                open_uses.remove(result.tool_use_id)
    assert open_uses == set()


@pytest.mark.skipif(not SHARED_FILES, reason=f"shared Claude Code data not found at {SHARED}")
@pytest.mark.parametrize("path", SHARED_FILES, ids=lambda p: str(p.relative_to(SHARED)))
def test_every_shared_file_loads(path):
    loaded = load_session(path)
    assert loaded.messages, path
    assert loaded.warnings == []
    assert_tools_paired(loaded.messages)
    # Every main-thread user and assistant record of the file is in the rebuilt history.
    counted = sum(1 for m in loaded.messages if not isinstance(m, SystemMessage))
    assert counted == _main_message_records(path)


def _main_message_records(path: Path) -> int:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    kinds = [r for r in records if r.get("type") in ("user", "assistant")]
    main = [r for r in kinds if not r.get("isSidechain")]
    return len(main or kinds)


def test_parallel_tool_tree_from_claude_code_2_1_6():
    loaded = load_session(FIXTURES / "cc_2.1.6_subagent_parallel_tools.jsonl")
    assert loaded.warnings == []
    assert len(loaded.messages) == 18  # every record, although the parentUuid graph is a tree
    assert_tools_paired(loaded.messages)
    first = loaded.messages[1]
    assert isinstance(first, AssistantMessage) and first.model == "claude-sonnet-4-5-20250929"
    assert first.usage.cache_creation_input_tokens == 9928 and first.usage.ephemeral_5m_input_tokens == 9928


def test_microcompact_session_from_claude_code_2_1_22():
    loaded = load_session(FIXTURES / "cc_2.1.22_microcompact.jsonl")
    assert loaded.warnings == []
    assert loaded.session_id == "f28e368b-423a-4989-a7b9-33d64ce6da47"
    assert_tools_paired(loaded.messages)
    systems = {m.subtype: m for m in loaded.messages if isinstance(m, SystemMessage)}
    assert set(systems) == {"microcompact_boundary", "api_error"}
    micro = systems["microcompact_boundary"]
    assert micro.metadata["tokensSaved"] == 34078 and len(micro.metadata["compactedToolIds"]) == 6
    assert systems["api_error"].level == "error" and systems["api_error"].metadata["maxRetries"] == 10
    kinds = {r.get("type") for r in loaded.side_records}
    assert {"file-history-snapshot", "progress", "system"} <= kinds  # kept raw, never lost
    assert loaded.messages[0].is_meta  # the local-command caveat
    assert loaded.metadata.model == "claude-opus-4-5-20251101" and loaded.metadata.version == "2.1.22"
