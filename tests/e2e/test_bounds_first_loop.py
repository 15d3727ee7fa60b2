"""A session whose projections try upper bounds of the token counts first (print mode's
`bounds_first`) decides as one that counts exactly: the same compactions in the same turns, the
same requests (docs/architecture.md 5.6)."""

from __future__ import annotations

import json

import pytest

from agent_repl.bootstrap import close_session, open_session
from agent_repl.context import projector
from agent_repl.core.model.events import CompactionFinished, ContextProjected, TurnEnded
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer

from .compaction_support import run, settings_for
from .test_compaction import prompt, reading_steps

WINDOW = 60_000
TURNS = 12


async def _session_run(tmp_path, *, bounds_first: bool) -> tuple[list[int], list[str], int]:
    """(the turns that compacted, the main requests' messages, how many projections kept an upper bound)."""
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": reading_steps(TURNS)}), context_window=WINDOW, summarizer=AgentSummarizer()
    )
    server.start()
    settings = settings_for(server, tmp_path, api_compaction=False, context_window=WINDOW)
    session = await open_session(settings, tmp_path, bounds_first=bounds_first)
    compacted: list[int] = []
    bounded = 0
    original = session.projector.project

    def project(history, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal bounded
        projection = original(history, **kwargs)
        bounded += projection.estimate_is_upper_bound
        return projection

    session.projector.project = project  # type: ignore[method-assign]
    try:
        for turn in range(TURNS):
            events = await run(session, prompt(turn))
            assert isinstance(events[-1], TurnEnded) and events[-1].reason == "completed"
            assert session.memory is not None
            await session.memory.wait_for_extraction(timeout=30)
            if any(isinstance(e, CompactionFinished) for e in events):
                compacted.append(turn)
            assert any(isinstance(e, ContextProjected) for e in events)
        exchanges = [e for e in server.recordings.messages if e.status == 200 and request_kind(e.body) is None]
        sent = [json.dumps(e.body["messages"]) for e in exchanges]
    finally:
        await close_session(session)
        server.stop()
    # The run's own folder shows in paths the summary names.
    return compacted, [_without_ids(s.replace(tmp_path.name, "<run>")) for s in sent], bounded


def _without_ids(text: str) -> str:
    """A request's messages without what differs between two runs (uuids, ids, times)."""
    import re

    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>", text)
    text = re.sub(r"\[id:[^\]]*\]", "[id]", text)
    text = re.sub(r'"signature": "[^"]*"', '"signature": ""', text)
    return re.sub(r"\b(?:toolu|msg|srvtoolu)_[A-Za-z0-9]+", "<id>", text)


async def test_bounds_first_makes_the_same_compactions_and_requests(tmp_path, monkeypatch: pytest.MonkeyPatch):
    # Every projection tries the bounds first, as if the encoder were never loaded: the strictest case.
    monkeypatch.setattr(projector, "encoder_loaded", lambda: False)
    exact = await _session_run(tmp_path / "run-exact-counts", bounds_first=False)
    bounds = await _session_run(tmp_path / "run-upper-bounds", bounds_first=True)
    assert exact[0], "the scenario compacts"
    assert bounds[0] == exact[0]
    for n, (ours, theirs) in enumerate(zip(bounds[1], exact[1], strict=True)):
        assert ours == theirs, f"request {n} differs"
    assert exact[2] == 0 and bounds[2] > 0, "no projection kept its upper bounds"
