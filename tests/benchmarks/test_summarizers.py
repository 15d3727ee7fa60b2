"""The summary conditions: realistic summaries have the calibrated size, lossy ones keep nothing
verbatim, for every kind of summary request the emulator answers; the calibration file is what
the shared sessions give."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_repl.context.compact_prompt import extract_summary
from agent_repl.emulator.tokens import TokenCounter
from agent_repl.offline.summary import AgentSummarizer
from benchmarks.replay.calibrate_summaries import STATED_CHARS, SummarySizes, measure
from benchmarks.replay.summarizers import LossySummarizer, RealisticSummarizer, summarizer_for

USER_TEXTS = [
    "Please find why the parser drops trailing commas in config files.",
    "Before you go on, remember this: the deploy token name is ZEBRA-4471. I will ask for it later.",
    "Now fix it and add a regression test next to the existing ones.",
]
PATHS = ["src/sqlparse/lexer_rules.py", "tests/test_trailing_commas.py"]
TODOS = ["Reproduce the dropped trailing comma", "Write the regression test for the lexer"]


def body() -> dict[str, Any]:
    """A conversation with typed messages, a needle, paths in tool calls and a todo list."""
    todo_input = {"todos": [{"content": c, "status": "pending", "activeForm": c} for c in TODOS]}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": USER_TEXTS[0]}]},
        {"role": "user", "content": [{"type": "text", "text": USER_TEXTS[1]}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "I will plan the work first."},
                {"type": "tool_use", "id": "t1", "name": "TodoWrite", "input": todo_input},
                {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": PATHS[0]}},
                {"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": f"pytest {PATHS[1]}"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "Todos have been modified successfully."},
                {"type": "tool_result", "tool_use_id": "t2", "content": "1\tRULES = [...]"},
                {"type": "tool_result", "tool_use_id": "t3", "content": "1 failed", "is_error": True},
                {"type": "text", "text": USER_TEXTS[2]},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "The lexer rule is missing a case."}]},
        {"role": "user", "content": [{"type": "text", "text": "<summary-request>\nSummarize the conversation."}]},
    ]
    return {"model": "claude-sonnet-5-5", "messages": messages}


def every_kind(summarizer: Any) -> dict[str, str]:
    """The summary as each request kind gets it: ours and the peers', session memory, the API's."""
    b = body()
    return {
        "summary": extract_summary(summarizer.summary(b, "summary")),
        "memory": extract_summary(summarizer.summary(b, "memory")),
        "compaction": summarizer.compaction(b, None),
    }


def test_the_lossy_summary_quotes_no_user_message_path_todo_item_or_needle():
    low, high = SummarySizes.load().target_chars
    for kind, text in every_kind(LossySummarizer()).items():
        leaked = [s for s in [*USER_TEXTS, *PATHS, *TODOS, "ZEBRA-4471", "lexer_rules"] if s in text]
        assert not leaked, (kind, leaked)
        assert low <= len(text) <= high + 200, (kind, len(text))


def test_the_extractive_summary_would_have_kept_them():
    # The control: the same conversation under the emulator's extractive summary keeps them all.
    text = extract_summary(AgentSummarizer().summary(body(), "summary"))
    assert all(s in text for s in [*USER_TEXTS, *PATHS])


def test_the_realistic_summary_has_the_calibrated_size_and_keeps_the_extractive_content():
    low, high = SummarySizes.load().target_chars
    extractive = extract_summary(AgentSummarizer().summary(body(), "summary"))
    assert len(extractive) < low / 4  # the emulator's own summaries are far shorter than real ones
    counter = TokenCounter()
    for kind, text in every_kind(RealisticSummarizer()).items():
        assert low <= len(text) <= high + 200, (kind, len(text))
        assert all(s in text for s in USER_TEXTS), kind
        # What the meter charges: thousands of output tokens, as a real summary costs.
        assert counter.count_text(text) >= low / 5, kind


def test_summaries_repeat_exactly_for_the_same_conversation():
    for summarizer in (RealisticSummarizer(), LossySummarizer()):
        assert every_kind(summarizer) == every_kind(summarizer)


def test_summarizer_for_names_each_condition_and_refuses_others():
    assert isinstance(summarizer_for("realistic"), RealisticSummarizer)
    assert isinstance(summarizer_for("lossy"), LossySummarizer)
    assert isinstance(summarizer_for("extractive"), AgentSummarizer)
    with pytest.raises(ValueError, match="unknown summary condition 'terse'"):
        summarizer_for("terse")


def test_the_calibration_measures_compaction_summaries_in_transcripts(tmp_path: Path):
    summary = "This session is being continued from a previous conversation. " * 200
    lines = [
        '{"type":"user","message":{"role":"user","content":"hello"}}',
        '{"type":"user","isCompactSummary":true,"message":{"role":"user","content":' + f'"{summary}"' + "}}",
        "not json",
    ]
    (tmp_path / "s.jsonl").write_text("\n".join(lines), encoding="utf-8")
    sizes = measure([tmp_path])
    assert sizes.chars == [len(summary)] and sizes.tokens[0] > 0 and sizes.source.startswith("measured")
    assert measure([tmp_path / "nothing"]).target_chars == STATED_CHARS


def test_the_committed_calibration_is_that_of_the_shared_sessions(shared_data: Path):
    assert measure([shared_data / "claude_code"]) == SummarySizes.load()


def test_a_long_request_is_quoted_once_in_full_so_the_realistic_summary_keeps_its_size():
    # The extractive sections repeat the latest request as the intent, the pending task and the next
    # step; the realistic summary quotes it in full once (section 6) and stays at the real size.
    task = "Fix the failing lint rule so that trailing commas are reported once. " * 90
    b = {"messages": [
        {"role": "user", "content": [{"type": "text", "text": task}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "src"},
                                     {"type": "text", "text": "<summary-request>\nSummarize."}]},
    ]}
    low, high = SummarySizes.load().target_chars
    assert extract_summary(AgentSummarizer().summary(b, "summary")).count(task) >= 3
    for text in (extract_summary(RealisticSummarizer().summary(b, "summary")), RealisticSummarizer().compaction(b, None)):
        assert text.count(task) == 1 and low <= len(text) <= high + 200, len(text)
