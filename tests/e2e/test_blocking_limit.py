"""The blocking check end to end: with autocompact off, a request over the blocking limit is never
sent; the user reads why in a synthetic reply, and the turn ends with an error (docs/architecture.md 5.8)."""

from __future__ import annotations

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.model.events import AssistantMessageEvent, ErrorEvent, TurnEnded
from agent_repl.core.model.messages import UserMessage
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from tests.e2e.compaction_support import run, settings_for


async def test_a_request_over_the_blocking_limit_is_refused_without_a_call(tmp_path):
    server = EmulatorServer(policy=ScriptPolicy({"steps": [{"text": "never asked"}]})).start()
    settings = settings_for(server, tmp_path, autocompact=False, context_window=50_000)
    session = await open_session(settings, tmp_path)
    try:
        # History already past the limit (one prompt that large would go as a saved file instead).
        await session.append(UserMessage(content="word " * 60_000))
        events = await run(session, "go on")
    finally:
        await close_session(session)
        server.stop()
    assert not [e for e in server.recordings.messages if e.body]
    [reply] = [e.message for e in events if isinstance(e, AssistantMessageEvent)]
    assert reply.is_synthetic and reply.text().startswith("Prompt is too long: about ")
    [error] = [e for e in events if isinstance(e, ErrorEvent)]
    assert error.message == reply.text()
    assert isinstance(events[-1], TurnEnded) and events[-1].reason == "error" and events[-1].num_requests == 0
    assert session.messages[-1] is reply
