"""Whatever a line holds, loading and listing never raise and never hang."""

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_repl.transcript.loader import load_session
from agent_repl.transcript.sessions import scan_session

KEYS = [
    "type", "uuid", "parentUuid", "logicalParentUuid", "message", "content", "role", "id", "tool_use_id",
    "subtype", "isSidechain", "isMeta", "usage", "input_tokens", "timestamp", "values", "toolUseId", "text",
]  # fmt: skip
VALUES = [
    "user",
    "assistant",
    "system",
    "text",
    "tool_use",
    "tool_result",
    "compact_boundary",
    "snip",
    "a",
    "b",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(VALUES) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(KEYS), children, max_size=4)
    ),
    max_leaves=12,
)
records = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6)
lines = st.lists(records.map(json.dumps) | st.text(max_size=20), max_size=12)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines)
def test_any_lines_load_without_error(content):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        path.write_text("\n".join(content), encoding="utf-8", errors="surrogatepass")
        loaded = load_session(path)
        assert isinstance(loaded.warnings, list)
        scan_session(path)


def test_odd_value_types_are_tolerated(cc, write_jsonl):
    lines = [
        {"type": ["user"], "uuid": "x"},
        {"type": "user", "uuid": ["a"], "message": {"content": "hi"}},
        {"type": {"k": 1}},
        cc.user(
            "u1",
            None,
            [{"type": {"a": 1}}, {"type": ["text"], "text": "x"}, {"type": "text", "text": "kept"}],
        ),
        cc.assistant("a1", "u1", "m1", {"type": "text", "text": "ok"}),
        cc.assistant("a2", "a1", "m2", {"type": "text", "text": "bad parent"}, parentUuid=7),
        {"type": "snip", "uuids": [1, 2], "source": "nobody"},
    ]
    loaded = load_session(write_jsonl(lines))
    assert [m.text() for m in loaded.messages] == ["kept", "ok"]
    assert any(w.startswith("line 6: unreadable assistant record") for w in loaded.warnings)
    assert any(w.startswith("line 7: invalid snip record kept as raw data") for w in loaded.warnings)
