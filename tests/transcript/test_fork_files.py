"""A fork takes the source session's tool-results/ and compaction records along, and points its
<persisted-output> previews at its own copies; nothing else in the history is rewritten."""

from __future__ import annotations

from agent_repl.core.model.messages import TextBlock, ToolResultBlock, UserMessage
from agent_repl.transcript.fork_files import (
    copy_session_files,
    point_to_copies,
    preview_rewriter,
    record_pointing_to_copies,
)
from agent_repl.transcript.records import ContentReplacementRecord, SnipRecord
from agent_repl.transcript.sidechain import copy_subagents


def _preview(path: str) -> str:
    return f"<persisted-output>\nOutput too large (3.0 KB). Full output saved to: {path}\n\nPreview:\n1\n</persisted-output>"


def test_the_outputs_and_compaction_records_are_copied_and_only_the_preview_paths_move(tmp_path):
    source = tmp_path / "old" / "s1.jsonl"
    target = tmp_path / "new" / "s2.jsonl"
    (source.with_suffix("") / "tool-results").mkdir(parents=True)
    (source.with_suffix("") / "tool-results" / "b1.txt").write_text("1\n2\n3\n")
    (source.with_suffix("") / "subagents").mkdir()
    (source.with_suffix("") / "subagents" / "agent-acompact-abc123.jsonl").write_text('{"type":"user"}\n')
    (source.with_suffix("") / "subagents" / "agent-x1.jsonl").write_text("{}\n")
    # The session was written elsewhere (another home) and moved here since.
    written = "/home/someone/.claude/projects/-p/s1/tool-results/b1.txt"
    elsewhere = "/home/someone/.claude/projects/-p/s1/tool-results/missing.txt"
    history = [
        UserMessage(content=[ToolResultBlock(tool_use_id="t1", content=_preview(written))]),
        UserMessage(content=[ToolResultBlock(tool_use_id="t2", content=[TextBlock(text=_preview(written))])]),
        UserMessage(content=[ToolResultBlock(tool_use_id="t3", content=f"see {written}")]),
        UserMessage(content=[ToolResultBlock(tool_use_id="t4", content=_preview(elsewhere))]),
        UserMessage(content=f"the file {written} and {_preview(written)}"),
    ]

    copied = copy_session_files(source, target, lambda text: text)
    rewrite = preview_rewriter(source, target, copied)
    point_to_copies(history, rewrite)

    assert copied == ["b1.txt"]
    copy = target.with_suffix("") / "tool-results" / "b1.txt"
    assert copy.read_text() == "1\n2\n3\n"
    assert (target.with_suffix("") / "subagents" / "agent-acompact-abc123.jsonl").read_text() == '{"type":"user"}\n'
    # Sub-agents are copy_subagents' job (it links them to their Task calls).
    assert not (target.with_suffix("") / "subagents" / "agent-x1.jsonl").exists()
    assert history[0].content[0].content == _preview(str(copy))
    assert history[1].content[0].content[0].text == _preview(str(copy))
    assert history[2].content[0].content == f"see {written}"  # not a preview
    assert history[3].content[0].content == _preview(elsewhere)  # no such file was copied
    assert history[4].content == f"the file {written} and {_preview(written)}"  # not a tool result
    assert (source.with_suffix("") / "tool-results" / "b1.txt").read_text() == "1\n2\n3\n"


def test_copies_are_redacted_like_the_rest_of_the_fork(tmp_path):
    source, target = tmp_path / "s1.jsonl", tmp_path / "s2.jsonl"
    (source.with_suffix("") / "tool-results").mkdir(parents=True)
    (source.with_suffix("") / "tool-results" / "b1.txt").write_text("key=sk-ant-secret\n")
    copy_session_files(source, target, lambda text: text.replace("sk-ant-secret", "[REDACTED]"))
    assert (target.with_suffix("") / "tool-results" / "b1.txt").read_text() == "key=[REDACTED]\n"


def test_a_session_without_a_folder_copies_nothing(tmp_path):
    assert copy_session_files(tmp_path / "s1.jsonl", tmp_path / "s2.jsonl", lambda text: text) == []
    assert not (tmp_path / "s2").exists()


def test_our_content_replacement_records_name_the_copies_too(tmp_path):
    source, target = tmp_path / "s1.jsonl", tmp_path / "s2.jsonl"
    (source.with_suffix("") / "tool-results").mkdir(parents=True)
    (source.with_suffix("") / "tool-results" / "toolu_1.txt").write_text("big\n")
    rewrite = preview_rewriter(source, target, copy_session_files(source, target, lambda text: text))
    original = str(source.with_suffix("") / "tool-results" / "toolu_1.txt")
    record = ContentReplacementRecord(tool_use_id="toolu_1", replacement=_preview(original))
    moved = record_pointing_to_copies(record, rewrite)
    assert moved.replacement == _preview(str(target.with_suffix("") / "tool-results" / "toolu_1.txt"))
    assert record.replacement == _preview(original)  # a copy; the loaded record is untouched
    snip = SnipRecord(uuids=["u1"], source="user")
    assert record_pointing_to_copies(snip, rewrite) is snip


def test_symlinks_in_the_source_folder_are_not_followed(tmp_path):
    """A prepared session folder must not turn a fork into a copy of the user's other files."""
    secret = tmp_path / "private" / "credentials"
    secret.parent.mkdir()
    secret.write_text("the user's secret\n")
    source, target = tmp_path / "old" / "s1.jsonl", tmp_path / "new" / "s2.jsonl"
    results = source.with_suffix("") / "tool-results"
    results.mkdir(parents=True)
    (results / "b1.txt").symlink_to(secret)
    (results / "b2.txt").write_text("a real output\n")
    (source.with_suffix("") / "subagents").symlink_to(secret.parent, target_is_directory=True)
    assert copy_session_files(source, target, lambda text: text) == ["b2.txt"]
    assert sorted(p.name for p in (target.with_suffix("") / "tool-results").iterdir()) == ["b2.txt"]
    assert not (target.with_suffix("") / "subagents").exists()
    # A tool-results folder that is itself a link is not read at all.
    other = tmp_path / "other" / "s3.jsonl"
    other.with_suffix("").mkdir(parents=True)
    (other.with_suffix("") / "tool-results").symlink_to(secret.parent, target_is_directory=True)
    assert copy_session_files(other, tmp_path / "s4.jsonl", lambda text: text) == []


def test_sub_agent_copies_do_not_follow_links_either(tmp_path):
    secret = tmp_path / "private" / "id_key"
    secret.parent.mkdir()
    secret.write_text("the user's key\n")
    source, target = tmp_path / "old" / "s1.jsonl", tmp_path / "new" / "s2.jsonl"
    subagents = source.with_suffix("") / "subagents"
    subagents.mkdir(parents=True)
    (subagents / "agent-a1.jsonl").symlink_to(secret)
    (subagents / "agent-a2.jsonl").write_text("{}\n")
    copy_subagents(source, target, [], lambda text: text)
    assert sorted(p.name for p in (target.with_suffix("") / "subagents").iterdir()) == ["agent-a2.jsonl"]
    linked = tmp_path / "linked" / "s5.jsonl"
    linked.with_suffix("").mkdir(parents=True)
    (linked.with_suffix("") / "subagents").symlink_to(secret.parent, target_is_directory=True)
    copy_subagents(linked, tmp_path / "s6.jsonl", [], lambda text: text)
    assert not (tmp_path / "s6").exists()


def test_an_output_over_the_size_cap_stays_where_it_is(tmp_path):
    source, target = tmp_path / "s1.jsonl", tmp_path / "s2.jsonl"
    results = source.with_suffix("") / "tool-results"
    results.mkdir(parents=True)
    (results / "big.txt").write_text("x" * 101)
    (results / "small.txt").write_text("x" * 100)
    assert copy_session_files(source, target, lambda text: text, max_bytes=100) == ["small.txt"]
    written = str(results / "big.txt")
    history = [UserMessage(content=[ToolResultBlock(tool_use_id="t1", content=_preview(written))])]
    point_to_copies(history, preview_rewriter(source, target, ["small.txt"]))
    assert history[0].content[0].content == _preview(written)
