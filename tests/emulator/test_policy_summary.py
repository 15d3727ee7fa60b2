"""The agent's extractive compaction and memory summaries: nine sections, every user message verbatim."""

from __future__ import annotations

from typing import Any

from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies.base import PolicyRequest, summary_reply
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.offline.summary import AgentSummarizer, quoted_in_earlier_summary, summary_text

SECTIONS = [
    "1. Primary Request and Intent:",
    "2. Key Technical Concepts:",
    "3. Files and Code Sections:",
    "4. Errors and Fixes:",
    "5. Problem Solving:",
    "6. All User Messages:",
    "7. Pending Tasks:",
    "8. Current Work:",
    "9. Optional Next Step:",
]
USER_MESSAGES = [
    "Fix the failing test in tests/test_parser.py",
    "Also, keep the public API unchanged.\nAnd don't touch setup.py!",
    "Use `pytest -x` please",
]


def conversation(last: str) -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<system-reminder>Today is Monday.</system-reminder>"},
                {"type": "text", "text": USER_MESSAGES[0] + " [id:k3x9a0]"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading it."},
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Read",
                    "input": {"file_path": "/repo/tests/test_parser.py"},
                },
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "SECRET TOOL OUTPUT"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "pytest -x"}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "content": "E   AssertionError: 3 != 4\n1 failed",
                    "is_error": True,
                },
                {"type": "text", "text": USER_MESSAGES[1]},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t3",
                    "name": "Edit",
                    "input": {"file_path": "/repo/src/parser.py", "old_string": "a", "new_string": "b"},
                }
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t3", "content": "ok"}]},
        {"role": "assistant", "content": "Fixed the off-by-one in the parser."},
        {"role": "user", "content": USER_MESSAGES[2] + " [id:zz0011]"},
        {"role": "assistant", "content": "Tests pass now."},
        {"role": "user", "content": last},
    ]


def body(last: str) -> dict[str, Any]:
    return {"model": "claude-sonnet-5-5", "messages": conversation(last)}


def test_request_kinds() -> None:
    assert request_kind(body("<summary-request>\nSummarize the conversation.")) == "summary"
    assert request_kind(body("  <session-memory-request>extract")) == "memory"
    assert request_kind(body("just a question")) is None


def test_summary_quotes_every_user_message_verbatim_in_section_six() -> None:
    text = summary_text(body("<summary-request>Summarize."), "summary")
    assert text.startswith("<analysis>\n") and "</analysis>" in text
    assert text.index("<summary>") > text.index("</analysis>") and text.rstrip().endswith("</summary>")
    positions = [text.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    section_six = text[text.index(SECTIONS[5]) : text.index(SECTIONS[6])]
    for message in USER_MESSAGES:
        assert message in section_six
    assert "[id:" not in section_six
    assert "system-reminder" not in section_six
    assert "SECRET TOOL OUTPUT" not in text
    assert "<summary-request>" not in section_six


def test_summary_lists_files_and_errors() -> None:
    text = summary_text(body("<summary-request>Summarize."), "summary")
    files = text[text.index(SECTIONS[2]) : text.index(SECTIONS[3])]
    assert "/repo/tests/test_parser.py (Read)" in files and "/repo/src/parser.py (Edit)" in files
    errors = text[text.index(SECTIONS[3]) : text.index(SECTIONS[4])]
    assert "Bash: E   AssertionError: 3 != 4" in errors
    assert "Tests pass now." in text[text.index(SECTIONS[7]) :]


def test_memory_requests_get_the_same_shape() -> None:
    spec = default_model_table()["claude-sonnet-5-5"]
    request = PolicyRequest(body("<session-memory-request>Extract."), spec, 0, summarizer=AgentSummarizer())
    reply = summary_reply(request, "memory")
    assert reply.stop_reason == "end_turn"
    text = reply.content[0]["text"]
    assert "session memory" in text
    assert all(s in text for s in SECTIONS)


def test_a_quote_with_a_carriage_return_survives_a_second_summary() -> None:
    typed = "first line\r\nsecond line"
    earlier = (
        "This session is being continued from a previous conversation.\n\n6. All User Messages:\n"
        f"   - {typed}\n   - another\n\n7. Pending Tasks:\n   - none\n"
    )
    assert quoted_in_earlier_summary(earlier) == [typed, "another"]
