"""A prompt the API refuses as too long, even after a compaction, leaves the session usable: it is
set aside (out of the view, still in the transcript), the user is told why, the next prompts are
answered, and the autocompact breaker stays closed (the prompt's size is not compaction failing)."""

from __future__ import annotations

import json

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.model.events import ErrorEvent, TurnEnded
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer
from tests.e2e.compaction_support import is_summary_request, run, settings_for


async def test_a_prompt_too_long_for_the_api_is_set_aside_and_the_session_goes_on(tmp_path):
    answers = [{"text": f"answer {n}"} for n in range(8)]
    # The API's window is smaller than the one configured: the prompt passes our own size check
    # (a quarter of 200K tokens) and the API refuses it.
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": answers}), context_window=20_000, summarizer=AgentSummarizer()
    ).start()
    settings = settings_for(server, tmp_path, context_window=200_000)
    session = await open_session(settings, tmp_path)
    big = "".join(f"row {n}: some words in a line\n" for n in range(3_500))
    turns = []
    try:
        for prompt in ["hello", big, "and now?", big, big, "still there?", big, "last one?"]:
            turns.append((prompt, await run(session, prompt)))
        transcript = session.sink.path.read_text()
        compactor = session.compactor
    finally:
        await close_session(session)
        server.stop()
    for prompt, events in turns:
        errors = [e.message for e in events if isinstance(e, ErrorEvent)]
        ended = events[-1]
        assert isinstance(ended, TurnEnded)
        if prompt is big:
            assert ended.reason == "error" and len(errors) == 1
            assert "prompt is too long" in errors[0] and "left out of the conversation" in errors[0]
            # The status line's figure: the next request, without the prompt set aside.
            assert ended.next_request_tokens is not None and ended.next_request_tokens < 20_000
        else:
            assert ended.reason == "completed" and not errors, errors
    # Every short prompt was answered, and none of its requests carried a big one.
    ok = [e.body for e in server.recordings.messages if e.status == 200 and not is_summary_request(e.body)]
    assert len(ok) == 4 and all("row 3499" not in json.dumps(body) for body in ok)
    assert compactor is not None and not compactor.disabled and compactor.consecutive_failures == 0
    assert transcript.count("row 3499: some words") == 4  # set aside, not lost
