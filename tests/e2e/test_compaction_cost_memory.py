"""What the cost-aware trigger learns from a real compaction (context/autocompact.py): the summary's
output tokens on the boundary, and the compacted view's size from the first reply after it, read
back from the history alone, so a resumed session knows the same."""

from __future__ import annotations

from agent_repl.bootstrap import close_session, open_session
from agent_repl.context.autocompact import summary_output_estimate
from agent_repl.core.loop.compact import compact_now
from agent_repl.core.model.messages import SystemMessage
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer

from .compaction_support import is_summary_request, run, settings_for
from .test_compaction import prompt, reading_steps


async def test_a_compaction_leaves_its_summary_cost_and_the_compacted_size_for_the_next_decision(tmp_path):
    server = EmulatorServer(policy=ScriptPolicy({"steps": reading_steps(4)}), summarizer=AgentSummarizer())
    server.start()
    settings = settings_for(server, tmp_path, api_compaction=False)
    session = await open_session(settings, tmp_path)
    try:
        for turn in range(3):
            await run(session, prompt(turn))
        assert await compact_now(session, "manual").run_to_end() is True
        summary = next(e for e in reversed(server.recordings.messages) if e.status == 200 and is_summary_request(e.body))
        [boundary] = [m for m in session.messages if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"]
        assert boundary.metadata["summaryOutputTokens"] == summary.usage["output_tokens"] > 0
        state = session.projector.state
        session.projector.project(session.messages)
        last = state.compaction.last
        assert last is not None and last.after_tokens is None and last.responses_since == 0
        assert summary_output_estimate(100_000, state) == summary.usage["output_tokens"]

        await run(session, prompt(3))
        main = [e for e in server.recordings.messages if e.status == 200 and request_kind(e.body) is None]
        first = main[-2]
        session.projector.project(session.messages)
        last = state.compaction.last
        assert last is not None and last.responses_since == 2
        used = first.usage
        assert last.after_tokens == used["input_tokens"] + used["cache_creation_input_tokens"] + used["cache_read_input_tokens"]
    finally:
        await close_session(session)
        server.stop()
