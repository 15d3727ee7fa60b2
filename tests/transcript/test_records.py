import json
from typing import Literal

import pytest

from agent_repl.core.model.messages import (
    AssistantMessage,
    SystemMessage,
    TextBlock,
    ToolReferenceBlock,
    ToolUseBlock,
    UserMessage,
)
from agent_repl.transcript.convert import Envelope, clean_block, message_to_record, record_to_message
from agent_repl.transcript.records import (
    BUILTIN_SIDE_RECORDS,
    ContentReplacementRecord,
    SideRecord,
    SideRecordRegistry,
)

ENV = Envelope(
    session_id="9d1c3a52-6b7e-4f80-a1b2-c3d4e5f6a7b8", cwd="/home/dev/p", version="0.1.0", git_branch="main"
)


def through_json(data):
    return json.loads(json.dumps(data))


def test_every_message_kind_round_trips(session_items):
    messages = [m for m in session_items if not isinstance(m, SideRecord)]
    kinds = {(type(m).__name__, getattr(m, "subtype", None)) for m in messages}
    assert {k for k, _ in kinds} == {"UserMessage", "AssistantMessage", "SystemMessage"}
    assert {s for _, s in kinds} >= {
        "compact_boundary",
        "microcompact_boundary",
        "local_command",
        "api_error",
        "informational",
    }
    for msg in messages:
        record = through_json(message_to_record(msg, ENV))
        assert record_to_message(record) == msg, record


def test_message_record_has_claude_code_envelope():
    msg = UserMessage(content="hi", session_id=ENV.session_id, parent_uuid=None)
    record = message_to_record(msg, ENV)
    assert record["parentUuid"] is None  # written, not omitted
    assert {
        k: record[k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "type")
    } == {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/p",
        "sessionId": ENV.session_id,
        "version": "0.1.0",
        "gitBranch": "main",
        "type": "user",
    }
    assert record["message"] == {"role": "user", "content": "hi"}
    assert "isMeta" not in record and "toolUseResult" not in record


def test_assistant_record_holds_one_block_in_an_api_message(session_items):
    msg = next(m for m in session_items if isinstance(m, AssistantMessage) and m.tool_uses())
    record = message_to_record(msg, ENV)
    assert record["requestId"] == "req_01AAA"
    assert record["message"] == {
        "id": "msg_01AAA",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_01Bash",
                "name": "Bash",
                "input": {"command": "wc -l notes.txt", "timeout": None},
            }
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 12,
            "cache_creation_input_tokens": 4800,
            "cache_read_input_tokens": 15000,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
            "output_tokens": 96,
        },
    }


def test_system_records_use_claude_code_field_names(session_items):
    by_subtype = {m.subtype: message_to_record(m, ENV) for m in session_items if isinstance(m, SystemMessage)}
    assert by_subtype["compact_boundary"]["compactMetadata"] == {"trigger": "auto", "preTokens": 167731}
    assert "logicalParentUuid" in by_subtype["compact_boundary"]
    assert by_subtype["microcompact_boundary"]["microcompactMetadata"]["tokensSaved"] == 34078
    assert by_subtype["api_error"]["retryInMs"] == 572.5 and by_subtype["api_error"]["level"] == "error"
    assert by_subtype["local_command"]["content"] == "<command-name>/context</command-name>"


def test_user_flags_map_to_claude_code_fields(session_items):
    summary = next(m for m in session_items if isinstance(m, UserMessage) and m.is_compact_summary)
    record = message_to_record(summary, ENV)
    assert record["isCompactSummary"] is True and record["isVisibleInTranscriptOnly"] is True
    meta = message_to_record(UserMessage(content="x", is_meta=True, source_tool_use_id="toolu_9"), ENV)
    assert meta["isMeta"] is True and meta["sourceToolUseID"] == "toolu_9"


def test_synthetic_message_is_stored_with_the_synthetic_model():
    msg = AssistantMessage(message_id="m", model="claude-x", is_synthetic=True, content=[TextBlock(text="x")])
    record = message_to_record(msg, ENV)
    assert record["message"]["model"] == "<synthetic>"
    assert record_to_message(record).is_synthetic


def test_non_message_records_convert_to_none(cc):
    assert record_to_message({"type": "progress", "uuid": "p", "data": {}}) is None
    assert record_to_message({"type": "summary", "summary": "t", "leafUuid": "x"}) is None
    assert record_to_message(cc.record("system", "s", None, subtype="turn_duration", durationMs=5)) is None
    # An attachment that is not a hook's words to the model (Claude Code's hook_success) is no message.
    assert record_to_message({"type": "attachment", "uuid": "a", "attachment": {"type": "hook_success"}}) is None


def test_a_stop_hook_summary_loads_as_the_notice_claude_code_wrote(cc):
    raw = cc.record("system", "s", None, subtype="stop_hook_summary", level="suggestion", hookCount=1,
                    hookInfos=[{"command": "notify.sh"}], hookErrors=[], preventedContinuation=False)
    message = record_to_message(raw)
    assert message.subtype == "stop_hook_summary" and message.level == "suggestion"
    assert message.metadata["hookInfos"] == [{"command": "notify.sh"}]
    assert message_to_record(message, ENV)["hookCount"] == 1


def test_unknown_block_types_and_fields_are_dropped_and_reported(cc):
    drops = []
    record = cc.assistant(
        "a",
        None,
        "msg_1",
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "ToolSearch",
            "input": {},
            "caller": {"type": "direct"},
            "cache_control": {"type": "ephemeral"},
        },
    )
    msg = record_to_message(record, on_drop=drops.append)
    assert msg.content == [ToolUseBlock(id="toolu_1", name="ToolSearch", input={})]
    assert drops == ["field 'caller' on tool_use blocks", "field 'cache_control' on tool_use blocks"]

    drops.clear()
    result = cc.user(
        "u",
        "a",
        [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [
                    {"type": "tool_reference", "tool_name": "Read"},
                    {"type": "text", "text": "ok", "citations": None},
                ],
            }
        ],
    )
    msg = record_to_message(result, on_drop=drops.append)
    assert msg.tool_results()[0].content == [ToolReferenceBlock(tool_name="Read"), TextBlock(text="ok")]
    assert drops == []  # citations are known (web results back text up with them)


def test_a_record_with_only_unknown_blocks_is_not_a_message(cc):
    drops = []
    record = cc.assistant(
        "a", None, "msg_1", {"type": "mcp_tool_use", "id": "mcp_1", "name": "search", "server_name": "x", "input": {}}
    )
    assert record_to_message(record, on_drop=drops.append) is None
    assert "content block type 'mcp_tool_use'" in drops


def test_claude_code_levels_and_metadata_are_mapped(cc):
    record = cc.record(
        "system",
        "s",
        "p",
        subtype="api_error",
        level="error",
        slug="lovely-juggling-book",
        cause={},
        error={"cause": {}},
        retryInMs=572.57,
        retryAttempt=1,
        maxRetries=10,
    )
    msg = record_to_message(record)
    assert msg.metadata == {
        "cause": {},
        "error": {"cause": {}},
        "retryInMs": 572.57,
        "retryAttempt": 1,
        "maxRetries": 10,
    }
    local = record_to_message(
        cc.record("system", "l", "p", subtype="local_command", level="suggestion", content="x", isMeta=False)
    )
    assert local.level == "suggestion" and local.metadata == {}


def test_malformed_message_record_raises_value_error(cc):
    with pytest.raises(ValueError):
        record_to_message(cc.record("assistant", "a", None, message={"content": "not a list"}))


def test_clean_block_rejects_non_objects():
    drops = []
    assert clean_block("text", drops.append) is None and drops == ["a content block that is not an object"]


def test_side_records_round_trip_with_camel_case_keys(session_items):
    registry = SideRecordRegistry()
    side = [r for r in session_items if isinstance(r, SideRecord)]
    assert {type(r) for r in side} == set(BUILTIN_SIDE_RECORDS)
    for record in side:
        data = through_json(record.to_json())
        assert data["type"] == record.record_type() and "session_id" not in data
        assert registry.parse(data) == record
    replacement = next(r for r in side if isinstance(r, ContentReplacementRecord))
    assert set(replacement.to_json()) == {"type", "sessionId", "timestamp", "toolUseId", "replacement"}


def test_registry_takes_new_types_and_refuses_clashes():
    class PlanRecord(SideRecord):
        type: Literal["plan-update"] = "plan-update"
        plan_uuid: str

    registry = SideRecordRegistry()
    assert "plan-update" not in registry
    registry.register(PlanRecord)
    parsed = registry.parse({"type": "plan-update", "planUuid": "b", "futureField": 1})
    assert isinstance(parsed, PlanRecord) and parsed.plan_uuid == "b"
    assert registry.parse({"type": "never-heard-of-it"}) is None

    class Clash(SideRecord):
        type: Literal["progress"] = "progress"

    with pytest.raises(ValueError):
        registry.register(Clash)
