import json

import pytest

from agent_repl.core.model.messages import AssistantMessage, SystemMessage, UserMessage
from agent_repl.transcript.loader import load_session
from agent_repl.transcript.records import ContentReplacementRecord


def texts(loaded):
    return [m.text() if not isinstance(m, SystemMessage) else f"<{m.subtype}>" for m in loaded.messages]


def simple_chain(cc, n=3):
    """u0 -> a1 -> u2 ..., alternating user and assistant."""
    records, parent = [], None
    for i in range(n):
        uuid = f"r{i}"
        if i % 2 == 0:
            records.append(cc.user(uuid, parent, f"t{i}"))
        else:
            records.append(cc.assistant(uuid, parent, f"msg_{i}", {"type": "text", "text": f"t{i}"}))
        parent = uuid
    return records


def test_torn_last_line_is_skipped_with_its_line_number(cc, write_jsonl):
    lines = [*simple_chain(cc, 3), '{"parentUuid":"r2","type":"assistant","mess']
    loaded = load_session(write_jsonl(lines, final_newline=False))
    assert texts(loaded) == ["t0", "t1", "t2"]
    assert loaded.warnings == ["line 4: torn last line (the write was cut off), skipped"]


def test_malformed_middle_line_is_skipped_and_the_rest_loads(cc, write_jsonl):
    records = simple_chain(cc, 4)
    lines = [records[0], records[1], "{not json at all", "[1, 2]", records[2], records[3]]
    loaded = load_session(write_jsonl(lines))
    assert texts(loaded) == ["t0", "t1", "t2", "t3"]
    assert loaded.warnings[0].startswith("line 3: malformed JSON, skipped")
    assert loaded.warnings[1] == "line 4: not a JSON object (list), skipped"


def test_blank_lines_are_ignored(cc, write_jsonl):
    records = simple_chain(cc, 2)
    loaded = load_session(write_jsonl([records[0], "", "   ", records[1]]))
    assert texts(loaded) == ["t0", "t1"] and loaded.warnings == []


def test_unknown_record_types_and_fields_are_kept(cc, write_jsonl):
    records = simple_chain(cc, 2)
    unknown = {"type": "frame-link", "frameId": 7, "sessionId": "cc-1"}
    progress = cc.record(
        "progress", "p1", "r1", data={"type": "hook_progress"}, toolUseID="t", parentToolUseID="t"
    )
    replacement = {
        "type": "content-replacement",
        "toolUseId": "t",
        "replacement": "x",
        "sessionId": "cc-1",
        "timestamp": "z",
        "newField": 1,
    }
    records[0]["brandNewEnvelopeField"] = {"a": 1}
    loaded = load_session(write_jsonl([records[0], unknown, records[1], progress, replacement]))
    assert texts(loaded) == ["t0", "t1"] and loaded.warnings == []
    assert loaded.side_records[0] == unknown and loaded.side_records[1] == progress
    parsed = loaded.side_records[2]
    assert isinstance(parsed, ContentReplacementRecord) and parsed.replacement == "x"


def test_invalid_side_record_is_kept_raw_with_a_warning(write_jsonl):
    bad = {"type": "snip", "uuids": "not-a-list", "source": "model"}
    loaded = load_session(write_jsonl([bad]))
    assert loaded.side_records == [bad]
    assert loaded.warnings[0].startswith("line 1: invalid snip record kept as raw data")


def test_progress_records_are_links_in_the_chain(cc, write_jsonl):
    lines = [
        cc.user("u1", None, "go"),
        cc.assistant(
            "a1", "u1", "m1", {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
        ),
        cc.record("progress", "p1", "a1", data={"type": "bash_progress"}),
        cc.record("progress", "p2", "p1", data={"type": "hook_progress"}),
        cc.user("u2", "p2", [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]),
        cc.assistant("a2", "u2", "m2", {"type": "text", "text": "done"}),
    ]
    loaded = load_session(write_jsonl(lines))
    assert [m.uuid for m in loaded.messages] == ["u1", "a1", "u2", "a2"] and loaded.warnings == []


def test_walk_follows_the_branch_of_the_leaf(cc, write_jsonl):
    # A rewind: u2 was abandoned, the conversation went on from a1 with u3.
    lines = [
        cc.user("u1", None, "one"),
        cc.assistant("a1", "u1", "m1", {"type": "text", "text": "two"}),
        cc.user("u2", "a1", "abandoned"),
        cc.user("u3", "a1", "three"),
    ]
    loaded = load_session(write_jsonl(lines))
    assert texts(loaded) == ["one", "two", "three"]


def test_parallel_tool_results_linked_to_their_own_tool_use_are_all_kept(cc, write_jsonl):
    lines = [
        cc.user("u1", None, "read both"),
        cc.assistant(
            "a1", "u1", "m1", {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}}
        ),
        cc.assistant(
            "a2", "a1", "m1", {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "/b"}}
        ),
        cc.user("r2", "a2", [{"type": "tool_result", "tool_use_id": "t2", "content": "B"}]),
        cc.user("r1", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "A"}]),
        cc.assistant("a3", "r1", "m2", {"type": "text", "text": "both read"}),
    ]
    loaded = load_session(write_jsonl(lines))
    assert [m.uuid for m in loaded.messages] == ["u1", "a1", "a2", "r2", "r1", "a3"]


def test_compact_boundary_continues_through_logical_parent(cc, write_jsonl):
    lines = [
        *simple_chain(cc, 2),
        cc.record(
            "system",
            "b1",
            None,
            subtype="compact_boundary",
            content="Conversation compacted",
            logicalParentUuid="r1",
            compactMetadata={"trigger": "auto", "preTokens": 170251},
        ),
        cc.user(
            "s1",
            "b1",
            "This session is being continued...",
            isCompactSummary=True,
            isVisibleInTranscriptOnly=True,
        ),
        cc.assistant("a9", "s1", "m9", {"type": "text", "text": "after"}),
    ]
    loaded = load_session(write_jsonl(lines))
    assert texts(loaded) == ["t0", "t1", "<compact_boundary>", "This session is being continued...", "after"]
    boundary = loaded.messages[2]
    assert boundary.logical_parent_uuid == "r1" and boundary.metadata == {
        "trigger": "auto",
        "preTokens": 170251,
    }
    assert loaded.messages[3].is_compact_summary and loaded.warnings == []


def test_boundary_whose_logical_parent_is_missing_starts_the_history(cc, write_jsonl):
    lines = [
        cc.user("old", None, "elsewhere"),
        cc.record(
            "system", "b1", None, subtype="compact_boundary", logicalParentUuid="gone", compactMetadata={}
        ),
        cc.user("s1", "b1", "summary", isCompactSummary=True),
    ]
    loaded = load_session(write_jsonl(lines))
    assert [m.uuid for m in loaded.messages] == ["b1", "s1"]
    assert loaded.warnings == [
        "line 2: logicalParentUuid not in this file; the history starts at this boundary"
    ]


def test_broken_chain_falls_back_to_file_order(cc, write_jsonl):
    lines = [cc.user("u1", None, "one"), cc.assistant("a1", "missing", "m1", {"type": "text", "text": "two"})]
    loaded = load_session(write_jsonl(lines))
    assert texts(loaded) == ["one", "two"]
    assert loaded.warnings == ["line 2: parentUuid missing is not in this file; using file order"]


@pytest.mark.timeout(10)
def test_parent_cycle_terminates(cc, write_jsonl):
    lines = [
        cc.user("u1", "a1", "one"),
        cc.assistant("a1", "u1", "m1", {"type": "text", "text": "two"}),
        cc.user("self", "self", "loop on itself"),
        cc.user("u2", "u1", "three"),
    ]
    loaded = load_session(write_jsonl(lines))
    assert texts(loaded) == ["one", "two", "loop on itself", "three"]
    assert any("loops back on itself; using file order" in w for w in loaded.warnings)


@pytest.mark.timeout(10)
def test_duplicate_uuids_terminate_and_keep_the_first(cc, write_jsonl):
    lines = [
        cc.user("u1", None, "one"),
        cc.assistant("a1", "u1", "m1", {"type": "text", "text": "two"}),
        cc.assistant("a1", "a1", "m1", {"type": "text", "text": "two again"}),
        cc.user("u2", "a1", "three"),
        cc.user("u2", "u2", "three again"),
    ]
    loaded = load_session(write_jsonl(lines))
    assert texts(loaded) == ["one", "two", "three"]
    assert "line 2: uuid a1 appears 2 times; the first record is kept" in loaded.warnings
    assert "line 4: uuid u2 appears 2 times; the first record is kept" in loaded.warnings


def test_invalid_utf8_is_replaced_with_a_warning(cc, tmp_path):
    path = tmp_path / "s.jsonl"
    good = json.dumps(cc.user("u1", None, "caf\u00e9")).encode()
    bad = json.dumps(cc.user("u2", "u1", "XX")).encode().replace(b"XX", b"\xff\xfe")
    path.write_bytes(good + b"\n" + bad + b"\n")
    loaded = load_session(path)
    assert [m.text() for m in loaded.messages] == ["caf\u00e9", "\ufffd\ufffd"]
    assert loaded.warnings == ["line 2: invalid UTF-8, replaced with U+FFFD"]


def test_huge_lines_load_and_oversized_ones_are_skipped(cc, write_jsonl):
    big = "x" * 5_000_000
    lines = [
        cc.user("u1", None, "go"),
        cc.user("u2", "u1", big),
        cc.assistant("a1", "u2", "m1", {"type": "text", "text": "ok"}),
    ]
    path = write_jsonl(lines)
    assert [len(m.text()) for m in load_session(path).messages] == [2, 5_000_000, 2]
    limited = load_session(path, max_line_bytes=1_000_000)
    assert limited.warnings[0] == "line 2: longer than 1000000 bytes, skipped"
    assert limited.warnings[1] == "line 3: parentUuid u2 is not in this file; using file order"
    assert [m.text() for m in limited.messages] == ["go", "ok"]


def test_unconvertible_message_record_is_reported_and_still_a_link(cc, write_jsonl):
    lines = [
        cc.user("u1", None, "one"),
        cc.record("assistant", "a1", "u1", message={"content": "no id"}),
        cc.user("u2", "a1", "two"),
    ]
    loaded = load_session(write_jsonl(lines))
    assert texts(loaded) == ["one", "two"]
    assert loaded.warnings[0].startswith("line 2: unreadable assistant record, kept out of the history")


def test_dropped_block_fields_are_reported_once_with_a_count(cc, write_jsonl):
    lines, parent = [cc.user("u0", None, "go")], "u0"
    for i in range(3):
        lines.append(cc.assistant(f"a{i}", parent, f"m{i}", {"type": "text", "text": "x", "annotations": []}))
        parent = f"a{i}"
    loaded = load_session(write_jsonl(lines))
    assert len(loaded.messages) == 4
    assert loaded.warnings == [
        "line 2: dropped field 'annotations' on text blocks (our model does not know it; 3 times)"
    ]


def test_line_warnings_are_capped(write_jsonl):
    loaded = load_session(write_jsonl(["{bad"] * 250))
    assert len(loaded.warnings) == 201 and loaded.warnings[-1] == "... and 50 more line warnings"


def test_empty_file_and_subagent_file(tmp_path, cc, write_jsonl):
    empty = tmp_path / "e.jsonl"
    empty.write_text("")
    loaded = load_session(empty)
    assert loaded.messages == [] and loaded.session_id == "e" and loaded.leaf_uuid is None
    side = [dict(r, isSidechain=True, agentId="aa1") for r in simple_chain(cc, 2)]
    sub = load_session(write_jsonl(side, name="agent-aa1.jsonl"))
    assert texts(sub) == ["t0", "t1"] and sub.session_id == "cc-1"


def test_message_types_map(cc, write_jsonl):
    loaded = load_session(write_jsonl(simple_chain(cc, 2)))
    assert isinstance(loaded.messages[0], UserMessage) and isinstance(loaded.messages[1], AssistantMessage)
    assert (
        loaded.messages[1].request_id == "req_msg_1" and loaded.messages[1].usage.cache_read_input_tokens == 5
    )
