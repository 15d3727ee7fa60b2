"""A compaction from session notes at a turn's start (docs/architecture.md 5.6, 5.9).

Notes are made after the turn that brings the view near the autocompact point. The next turn then
compacts before its first request: the notes cover every earlier entry, so nothing of the finished
turns is kept verbatim (a compaction later in the turn keeps every result of the turn so far)."""

from __future__ import annotations

import json

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.model.events import AssistantMessageEvent, CompactionFinished, TurnEnded
from agent_repl.core.model.messages import SystemMessage
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer

from .compaction_support import run, settings_for
from .test_compaction import prompt, reading_steps

WINDOW = 60_000


async def test_notes_made_near_the_point_compact_the_next_turn_before_its_first_request(tmp_path):
    turns = 12
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": reading_steps(turns)}),
        context_window=WINDOW,
        summarizer=AgentSummarizer(),
    )
    server.start()
    settings = settings_for(server, tmp_path, api_compaction=False, context_window=WINDOW)
    session = await open_session(settings, tmp_path)
    try:
        compacted_in = None
        for turn in range(turns):
            events = await run(session, prompt(turn))
            assert isinstance(events[-1], TurnEnded) and events[-1].reason == "completed"
            assert session.memory is not None
            await session.memory.wait_for_extraction(timeout=30)
            finished = [i for i, e in enumerate(events) if isinstance(e, CompactionFinished)]
            if finished:
                compacted_in = turn
                replies = [i for i, e in enumerate(events) if isinstance(e, AssistantMessageEvent)]
                assert finished[0] < replies[0], "the compaction came after the turn's first reply"
                break
        assert compacted_in is not None, "no compaction in the session"
        exchanges = [e for e in server.recordings.messages if e.status == 200]
        assert not [e for e in exchanges if request_kind(e.body) == "summary"], "a summary request was made"
        boundary = next(
            m for m in session.messages if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"
        )
        assert boundary.metadata["usedSessionMemory"] is True
        main = [e for e in exchanges if request_kind(e.body) is None]
        assert len(main) == 2 * (compacted_in + 1)  # a Read and an answer a turn
        first_after = main[2 * compacted_in]
        sent = json.dumps(first_after.body["messages"])
        # Nothing of the finished turns is kept verbatim: no tool call or result, no reply.
        assert '"tool_result"' not in sent and '"tool_use"' not in sent
        assert [m["role"] for m in first_after.body["messages"]] == ["user"]
        # What the user typed is all there, the new prompt last.
        missing = [t for t in range(compacted_in + 1) if json.dumps(prompt(t))[1:-1] not in sent]
        assert not missing, missing
    finally:
        await close_session(session)
        server.stop()
