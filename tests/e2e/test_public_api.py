"""The agent on the public Messages API: preserved thinking through every pipeline edit.

The emulator runs as the public API does for an account created after 2026-08-31: a thinking
block sent back after anything before it changed fails the request with a 400, and nothing here
sets `drop_block`. Every edit the pipeline makes on purpose (autocompact, /compact, /snip, the
time-based clear, a resume) must leave no such block on the wire: asserted on the recorded
request bodies, which the emulator checked block by block.
"""

from __future__ import annotations

import json
import random
import struct
import zlib
from datetime import timedelta
from typing import Any

import pytest

from agent_repl.bootstrap import close_session, find_resume_source, open_session
from agent_repl.context.snip import snip_messages, snippable_messages
from agent_repl.core.loop.compact import compact_now
from agent_repl.core.model.events import CompactionFinished, CompactionStarted, TurnEnded
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer

from .compaction_support import RICH_FILES, OffsetClock, next_request_bytes, settings_for

# Sized for the default model's tokenizer (the newer one, about 1.3x the older count for the same text).
WINDOW = 52_000


def thinking_steps(turns: int) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for turn in range(turns):
        path = RICH_FILES[turn % len(RICH_FILES)]
        steps.append(
            {
                "thinking": f"Turn {turn}: the user wants {path.name}; read it first.",
                "text": f"Reading {path.name}.",
                "tools": [
                    {"name": "Read", "input": {"file_path": str(path)}},
                    {"name": "Grep", "input": {"pattern": "def ", "path": str(path)}},
                ],
            }
        )
        steps.append({"thinking": f"Turn {turn}: {path.name} looks fine.", "text": f"Read {path.name}; nothing odd."})
    return steps


def prompt(turn: int) -> str:
    return f"Turn {turn}: look at {RICH_FILES[turn % len(RICH_FILES)].name}, please (#{turn * 7919})."


def noise_png(width: int, height: int) -> bytes:
    """A PNG of random pixels (it does not compress: its bytes are about its pixels)."""
    rng = random.Random(7)
    raw = b"".join(b"\0" + bytes(rng.getrandbits(8) for _ in range(width * 3)) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def is_main(body: dict[str, Any]) -> bool:
    """A request of the turn itself, not a summary, session-memory or compaction request."""
    return request_kind(body) is None and "compaction" not in body


def first_main_after(exchanges: list[Any], index: int) -> Any:
    return next(e for e in exchanges[index:] if is_main(e.body))


def thinking_blocks(body: dict[str, Any]) -> int:
    return sum(b.get("type") == "thinking" for m in body["messages"] for b in m["content"])


async def run(session: Any, text: str, server: EmulatorServer, marks: dict[str, int]) -> list[Any]:
    """One turn; `marks["autocompact"]` is where the requests after an automatic compaction begin."""
    events = []
    async for event in session.run_turn(text):
        if isinstance(event, CompactionStarted) and event.trigger == "auto":
            marks["autocompact"] = server.state.request_count
        events.append(event)
    ended = [e for e in events if isinstance(e, TurnEnded)]
    assert ended and ended[-1].reason == "completed", [e for e in events if e.kind == "error"]
    return events


@pytest.mark.parametrize("api_compaction", [True, False], ids=["api-summary", "own-summary"])
async def test_a_long_thinking_session_through_every_edit_gets_no_400(tmp_path, api_compaction):
    turns = 20
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": thinking_steps(turns)}), summarizer=AgentSummarizer()
    )
    server.start()
    clock = OffsetClock()
    # Without the web server tools: their definitions move the autocompact off the middle of a turn;
    # with a kept tail that holds the turn so far, whose thinking the API's summary keeps.
    settings = settings_for(
        server, tmp_path, context_window=WINDOW, api_compaction=api_compaction, web_tools=False,
        compact_kept_tail_tokens=52_000,
    )
    session = await open_session(settings, tmp_path, clock=clock)
    first_after: dict[str, int] = {}
    compactions: list[str] = []
    try:
        for turn in range(turns):
            if turn == 5:
                first_after["/compact"] = server.state.request_count
                assert await compact_now(session, "manual").run_to_end() is True
            if turn == 7:
                # The Read result of the turn before last (and with it, its tool call).
                results = [m for m in snippable_messages(session, session.projector) if m.first_line.startswith("Read result")]
                snipped = await snip_messages(session, session.projector, results[-2].id)
                assert not snipped.is_error, snipped.user_text
                first_after["/snip"] = server.state.request_count
            if turn == 9:
                clock.offset += timedelta(minutes=61)
                server.clock.advance(61 * 60)
                first_after["time-based clear"] = server.state.request_count
            if turn == 11:
                expected = next_request_bytes(session)
                await close_session(session)
                source = find_resume_source(settings, tmp_path, session.session_id, latest=False)
                session = await open_session(settings, tmp_path, resume=source, clock=clock)
                assert next_request_bytes(session) == expected
                first_after["resume"] = server.state.request_count
            events = await run(session, prompt(turn), server, first_after)
            compactions += [e.trigger for e in events if isinstance(e, CompactionFinished)]
    finally:
        await close_session(session)
        server.stop()

    boundaries = [m.metadata.get("compactedToolIds") for m in session.messages if m.type == "system"
                  and m.subtype == "microcompact_boundary"]
    assert boundaries and boundaries[0], "the time-based clear cleared nothing"
    exchanges = [e for e in server.recordings.messages]
    assert [e.status for e in exchanges if e.status != 200] == []  # no 400, no retry of one
    assert "auto" in compactions
    bodies = [e.body for e in exchanges]
    assert not any("block_binding" in json.dumps(b.get("thinking", {})) for b in bodies)
    main = [b for b in bodies if is_main(b)]
    # Thinking still goes back: the last request carries what this turn's first reply thought.
    assert thinking_blocks(main[-1]) >= 1
    for event, index in first_after.items():
        assert first_main_after(exchanges, index).status == 200, event
    # Mid-turn, the turn so far is kept; its thinking goes on only where the API wrote the summary.
    kept_thinking = thinking_blocks(first_main_after(exchanges, first_after["autocompact"]).body)
    assert (kept_thinking > 0) is api_compaction, kept_thinking
    if api_compaction:
        assert any(b.get("compaction") == {"type": "summarize"} for b in bodies)
        assert main[-1]["messages"][0]["content"][0]["type"] == "compaction"


async def test_a_413_shrinks_the_summary_request_by_bytes_and_the_turn_goes_on(tmp_path):
    # A body limit far below the window: the request outgrows its bytes long before its tokens. The
    # last turn reads a file too big for the kept tail, so the summary request would send it all.
    limit = 500_000
    big = tmp_path / "screenshot.png"
    big.write_bytes(noise_png(400, 400))
    steps = thinking_steps(3)
    steps.append({"thinking": "Look at it.", "tools": [{"name": "Read", "input": {"file_path": str(big)}}]})
    steps.append({"text": "The screenshot is noise."})
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": steps}), max_body_bytes=limit, summarizer=AgentSummarizer()
    )
    server.start()
    session = await open_session(settings_for(server, tmp_path, api_compaction=False), tmp_path)
    try:
        for turn in range(3):
            await run(session, prompt(turn), server, {})
        events = await run(session, "now look at screenshot.png", server, {})
    finally:
        await close_session(session)
        server.stop()
    exchanges = server.recordings.messages
    kinds = [("summary" if request_kind(e.body or {}) == "summary" else "main", e.status) for e in exchanges[-3:]]
    # The main request was refused for its bytes; the summary request shed them before it was
    # sent (the image as a marker, the earlier rounds still there), and the main request went on.
    assert kinds == [("main", 413), ("summary", 200), ("main", 200)], kinds
    summary = exchanges[-2]
    assert len(summary.body_bytes) <= limit // 2 and "[image]" in summary.body_bytes.decode()
    assert all(prompt(turn) in summary.body_bytes.decode() for turn in range(3))
    assert len(exchanges[-1].body_bytes) < limit
    assert any(isinstance(e, CompactionFinished) and e.trigger == "reactive" for e in events)


@pytest.mark.parametrize("api_compaction", [True, False], ids=["api-summary", "own-summary"])
async def test_one_result_that_takes_the_view_past_the_window_is_compacted_without_a_refused_request(
    tmp_path, api_compaction
):
    # Small reads up to near the threshold, then one read the kept tail cannot hold: the API's
    # summary of everything would not fit the window, nor would ours of everything.
    for name, lines in (("small.txt", 260), ("big.txt", 1_500)):
        (tmp_path / name).write_text("".join(f"{i:05d} some words of a file to read, and a few more\n" for i in range(lines)))
    steps = []
    for turn in range(7):
        steps.append({"tools": [{"name": "Read", "input": {"file_path": str(tmp_path / "small.txt"), "offset": turn + 1}}]})
        steps.append({"text": f"Read part {turn}."})
    steps.append({"tools": [{"name": "Read", "input": {"file_path": str(tmp_path / "big.txt"), "limit": 800}}]})
    steps.append({"text": "Read the big one."})
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": steps}), context_window=50_000, summarizer=AgentSummarizer()
    )
    server.start()
    session = await open_session(settings_for(server, tmp_path, context_window=50_000, api_compaction=api_compaction), tmp_path)
    if not api_compaction:
        session.memory = None  # our nine-section summary request itself, not the session's notes
        session.after_turn_hooks.clear()
    try:
        for turn in range(8):
            await run(session, f"read part {turn}", server, {})
    finally:
        await close_session(session)
        server.stop()
    assert [e.status for e in server.recordings.messages if e.status != 200] == []
    assert any(m.type == "system" and m.subtype == "compact_boundary" for m in session.messages)
