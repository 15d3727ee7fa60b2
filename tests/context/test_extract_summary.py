"""extract_summary: the summary is what lies between `<summary>` and the tag that really closes it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_repl.context.compact_prompt import extract_summary

# Pieces a real summary quotes: task notifications, HTML details, stray tags, plain words.
PIECES = [
    "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n<summary>Build done</summary>\n</task-notification>",
    "<details><summary>Click to expand</summary>hidden text</details>",
    "</summary>",
    "<summary>",
    "the tag </summary> was missing",
    "<summary-request>",
    "\n",
    "7. Current Work: editing parser.py",
    "9. Optional Next Step: run the tests",
    "plain words ",
]
body_text = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=20)), max_size=8).map("".join)
analysis_text = body_text.filter(lambda text: "</analysis>" not in text)


@settings(max_examples=300, deadline=None)
@given(analysis=analysis_text, body=body_text, after=st.sampled_from(["", "\n", "\n\nDone."]))
def test_a_summary_quoting_its_own_tags_is_kept_whole(analysis, body, after):
    after = after if "</summary>" not in after else ""
    reply = f"<analysis>{analysis}</analysis>\n\n<summary>{body}</summary>{after}"
    assert extract_summary(reply) == body.strip()


@settings(max_examples=200, deadline=None)
@given(body=body_text.filter(lambda text: "<analysis>" not in text))
def test_without_an_analysis_the_whole_summary_is_kept(body):
    assert extract_summary(f"<summary>{body}</summary>") == body.strip()


def test_a_quoted_task_notification_no_longer_cuts_off_the_pending_tasks():
    reply = (
        "<analysis>thinking</analysis>\n<summary>\n1. Primary Request: fix the build\n"
        "6. All User Messages:\n- <task-notification><summary>Background build failed</summary></task-notification>\n"
        "8. Pending Tasks: rewrite the linker script\n9. Optional Next Step: rerun make\n</summary>"
    )
    summary = extract_summary(reply)
    assert "8. Pending Tasks: rewrite the linker script" in summary
    assert summary.endswith("9. Optional Next Step: rerun make")


def test_no_tags_gives_the_reply_without_its_analysis():
    assert extract_summary("<analysis>scratch</analysis>\nJust the text.") == "Just the text."
    assert extract_summary("No tags at all.") == "No tags at all."


def test_a_summary_never_closed_runs_to_the_end():
    assert extract_summary("<analysis>a</analysis><summary>1. Request: x\n2. Concepts") == "1. Request: x\n2. Concepts"


def test_summary_tags_inside_the_analysis_are_thrown_away_with_it():
    reply = "<analysis>I saw <summary>old</summary> in a result</analysis>\n<summary>the real one</summary>"
    assert extract_summary(reply) == "the real one"
