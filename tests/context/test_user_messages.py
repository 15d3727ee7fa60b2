"""The user-messages re-injection: budget, newest first, shortening in the middle, dedupe."""

from __future__ import annotations

from agent_repl.context.user_messages import (
    MIN_SHORTENED_TOKENS,
    choose_user_messages,
    shorten_middle,
    typed_texts,
    user_messages_reminder,
)
from agent_repl.core.model.messages import UserMessage


def words(text: str) -> int:
    """One token per word: easy to reason about in a test."""
    return len(text.split())


def test_all_fit_verbatim_oldest_first():
    texts = ["first ask", "second ask please", "third"]
    chosen, left_out = choose_user_messages(texts, 100, words)
    assert [c.text for c in chosen] == texts and not any(c.shortened for c in chosen) and left_out == 0


def test_the_newest_are_kept_whole_and_an_older_one_is_shortened_in_the_middle_with_the_path():
    old = " ".join(f"old{i}" for i in range(400))
    texts = [old, "recent one", "newest one"]
    chosen, left_out = choose_user_messages(texts, 100, words, transcript_path="/t/s.jsonl")
    assert [c.text for c in chosen[1:]] == ["recent one", "newest one"]
    shortened = chosen[0]
    assert shortened.shortened and shortened.text.startswith("old0 old1") and shortened.text.endswith("old399")
    assert "/t/s.jsonl" in shortened.text and "characters left out" in shortened.text
    assert sum(words(c.text) for c in chosen) <= 100 and left_out == 0


def test_once_the_budget_is_spent_the_oldest_are_only_counted():
    texts = ["a " * 80, "b " * 80, "c " * (100 - MIN_SHORTENED_TOKENS + 10)]
    chosen, left_out = choose_user_messages(texts, 100, words)
    assert len(chosen) == 1 and chosen[0].text.startswith("c") and left_out == 2
    reminder = user_messages_reminder(chosen, left_out, "/t/s.jsonl")
    assert "2 older messages left out" in reminder and "/t/s.jsonl" in reminder


def test_a_message_the_summary_quotes_word_for_word_is_not_repeated():
    texts = ["Use tabs in the Makefile.", "Never touch third_party/."]
    summary = "6. All User Messages:\n- Use  tabs in the\nMakefile.\n"
    chosen, _ = choose_user_messages(texts, 100, words, quoted_in=summary)
    assert [c.text for c in chosen] == ["Never touch third_party/."]
    everything, _ = choose_user_messages(texts, 100, words, quoted_in=summary + " Never touch third_party/.")
    assert everything == [] and user_messages_reminder(everything, 0, None) == ""


def test_shorten_middle_keeps_head_and_tail():
    text = "HEAD" + "x" * 1_000 + "TAIL"
    short = shorten_middle(text, 60, None)
    assert short.startswith("HEAD") and short.endswith("TAIL") and len(short) < 200
    assert shorten_middle("short", 60, None) == "short"


def test_typed_texts_leave_out_meta_summaries_tool_results_and_skipped_entries():
    typed = UserMessage(content="do the thing")
    skipped = UserMessage(content="rewound prompt")
    history = [
        UserMessage(content="environment", is_meta=True),
        typed,
        UserMessage(content="summary", is_compact_summary=True),
        UserMessage(content=[{"type": "tool_result", "tool_use_id": "t1", "content": "out"}]),
        UserMessage(content="<local-command-stdout>Compacted</local-command-stdout>"),
        UserMessage(content="<bash-stdout>ok</bash-stdout><bash-stderr></bash-stderr>"),
        UserMessage(content="<task-notification>\n<status>completed</status>\n</task-notification>"),
        skipped,
    ]
    assert typed_texts(history, {skipped.uuid}) == ["do the thing"]
    slash = UserMessage(content="<command-name>/review</command-name>\n<command-args>parser.py</command-args>")
    assert typed_texts([slash], set()) == [slash.text().strip()]  # a command the user typed counts
