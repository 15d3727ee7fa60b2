import os
from datetime import UTC, datetime
from pathlib import Path

from agent_repl.core.model.messages import AssistantMessage, TextBlock, UserMessage
from agent_repl.transcript.paths import SessionPaths
from agent_repl.transcript.records import SessionMetaRecord
from agent_repl.transcript.sessions import list_sessions, scan_session
from agent_repl.transcript.writer import TranscriptWriter

CWD = Path("/home/dev/proj")


async def make_session(home, session_id, day, prompts, *, title=None):
    paths = SessionPaths(home=home, cwd=CWD, session_id=session_id)
    async with TranscriptWriter(paths) as writer:
        await writer.append_message(
            UserMessage(
                content="<system-reminder>ctx</system-reminder>",
                is_meta=True,
                timestamp=f"2026-03-{day:02d}T08:00:00.000Z",
            )
        )
        for i, prompt in enumerate(prompts):
            await writer.append_message(
                UserMessage(content=prompt, timestamp=f"2026-03-{day:02d}T09:{i:02d}:00.000Z")
            )
            await writer.append_message(
                AssistantMessage(
                    message_id=f"m{i}",
                    content=[TextBlock(text="ok")],
                    timestamp=f"2026-03-{day:02d}T09:{i:02d}:30.000Z",
                )
            )
        if title:
            await writer.append_record(SessionMetaRecord(values={"title": title}))
    return paths


async def test_sessions_are_listed_newest_first_with_their_summary(tmp_path):
    old = await make_session(tmp_path, "s-old", 1, ["first task", "more"])
    new = await make_session(tmp_path, "s-new", 5, ["  fix the\n  bug  "], title="Bug fix")
    mid = await make_session(tmp_path, "s-mid", 3, ["x" * 500])
    # File times must not decide the order: make the oldest session the most recently touched file.
    os.utime(old.transcript, (2_000_000_000, 2_000_000_000))
    (old.project_dir / "agent-1234abcd.jsonl").write_text("{}\n")  # an old-layout subagent file

    sessions = list_sessions(old.project_dir)
    assert [s.session_id for s in sessions] == ["s-new", "s-mid", "s-old"]
    newest = sessions[0]
    assert newest.path == new.transcript and newest.title == "Bug fix"
    assert newest.first_prompt == "fix the bug"  # meta text skipped, whitespace folded
    assert newest.message_count == 3  # 2 user records + 1 assistant record
    assert newest.last_activity == datetime(2026, 3, 5, 9, 0, 30, tzinfo=UTC)
    assert newest.size_bytes == new.transcript.stat().st_size
    assert len(sessions[1].first_prompt) == 200 and sessions[1].path == mid.transcript
    assert sessions[2].message_count == 5


def test_missing_project_lists_nothing(tmp_path):
    assert list_sessions(tmp_path / "nope") == []


def test_long_lines_are_classified_without_parsing(tmp_path, cc, write_jsonl):
    big_result = [{"type": "tool_result", "tool_use_id": "t", "content": "y" * 200_000}]
    big_answer = {"type": "text", "text": "z" * 200_000}
    lines = [
        cc.user(
            "u1",
            None,
            "<command-message>init</command-message>\n<command-name>/init</command-name>\n<command-args>--fast</command-args>",
        ),
        cc.assistant("a1", "u1", "m1", {"type": "tool_use", "id": "t", "name": "Read", "input": {}}),
        cc.user("r1", "a1", big_result),
        cc.assistant("a2", "r1", "m2", big_answer),
        cc.record(
            "progress",
            "p1",
            "a2",
            data={"type": "agent_progress", "normalizedMessages": [{"type": "user"}] * 20_000},
        ),
        dict(cc.user("side", None, "sidechain"), isSidechain=True),
        "{torn",
    ]
    info = scan_session(write_jsonl(lines))
    assert info.message_count == 4
    assert info.first_prompt == "/init --fast"
    assert info.session_id == "cc-1"
