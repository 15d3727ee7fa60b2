"""A paste far past the window never breaks the session: it goes as a saved file with a preview,
the request is not refused, autocompact stays on, and the next prompt works."""

from __future__ import annotations

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.model.events import ErrorEvent, TurnEnded
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from tests.e2e.compaction_support import run, settings_for


async def test_a_5mb_paste_is_sent_as_a_file_and_the_session_goes_on(tmp_path):
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": [{"text": "got it"}, {"text": "still here"}]})
    ).start()
    settings = settings_for(server, tmp_path, context_window=50_000)
    session = await open_session(settings, tmp_path)
    paste = "".join(f"log line {n}: something happened\n" for n in range(150_000))
    assert len(paste) > 4_000_000
    try:
        first = await run(session, paste)
        second = await run(session, "and now?")
    finally:
        await close_session(session)
        server.stop()
    for events in (first, second):
        assert not [e for e in events if isinstance(e, ErrorEvent)]
        assert isinstance(events[-1], TurnEnded) and events[-1].reason != "error"
    sent = server.recordings.messages[0].body["messages"][0]["content"]
    text = sent if isinstance(sent, str) else "".join(b.get("text", "") for b in sent)
    assert len(text) < 20_000 and "log line 0: something happened" in text
    saved = list((session.tool_results_dir).glob("prompt-*.txt"))
    assert len(saved) == 1 and saved[0].read_text() == paste and str(saved[0]) in text
    assert session.compactor is not None and not session.compactor.disabled
