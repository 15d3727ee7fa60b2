"""A collapse session closed and resumed sends what the live one would have sent, byte for byte.

Between 80% and 90% of the window collapse stages spans it will commit later, and the estimates
that decide both read the token ratio learned from the API's usage. A resume must start from the
same staged spans and the same ratio: with its own, it stages other boundaries and the next
request collapses a different span. The tool outputs vary in size so the spans close at
different places in each run.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import rich

from agent_repl.bootstrap import close_session, find_resume_source, open_session
from agent_repl.core.config.settings import DEFAULT_MODEL
from agent_repl.core.model.events import ErrorEvent
from agent_repl.core.model.messages import Message, UserMessage
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.session import Session

from .compaction_support import settings_for
from .conftest import read_records, transcript_files

WINDOW = 40_000
MAX_TURNS = 30
SOURCE = sorted(p for p in Path(rich.__file__).parent.glob("*.py") if p.stat().st_size > 40_000)[0]


def steps(output_chars: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for turn in range(MAX_TURNS):
        skip = 1 + turn * 977
        command = f"tail -c +{skip} {SOURCE} | head -c {output_chars}"
        out.append({"text": f"Reading part {turn} of the file. " * 12, "tools": [{"name": "Bash", "input": {"command": command}}]})
        out.append({"text": f"Part {turn} defines helpers for rendering; nothing unusual. " * 10})
    return out


def prompt(turn: int) -> str:
    text = f"Turn {turn}: look at the next part of {SOURCE.name} and keep note #{turn * 7919}."
    # Every third prompt is long enough for the estimate to learn the ratio from the next usage.
    return text + (" Background: the renderer measures, wraps and styles its segments." * 110 if turn % 3 == 0 else "")


def models() -> dict[str, Any]:
    """The default table, with the default model counting 4% more tokens than our tokenizer table
    says (so the ratio the session learns differs from the one it starts with)."""
    table = default_model_table()
    spec = table[DEFAULT_MODEL]
    changed = replace(spec, token_factor=round(spec.token_factor * 1.04, 3))
    return {name: changed if entry is spec else entry for name, entry in table.items()}


def next_request(session: Session, extra: list[Message]) -> str:
    """The next request's bytes (a dry run), with `extra` entries after the history."""
    projection = session.projector.project([*session.messages, *extra], dry_run=True)
    return json.dumps({"messages": projection.wire, "extras": projection.body_extras, "betas": projection.betas})


@pytest.mark.parametrize("output_chars", [1_500, 2_600, 3_700, 4_800])
async def test_a_resumed_session_keeps_the_staged_spans_and_the_learned_ratio(tmp_path, output_chars):
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": steps(output_chars)}), models=models(), context_window=WINDOW
    )
    server.start()
    settings = settings_for(server, tmp_path, context_window=WINDOW, context_strategy="collapse")
    session = await open_session(settings, tmp_path)
    try:
        state = session.projector.state
        start_ratio = state.tokens.ratio
        for turn in range(MAX_TURNS):
            events = [e async for e in session.run_turn(prompt(turn))]
            assert not [e for e in events if isinstance(e, ErrorEvent)], (turn, events)
            if state.collapse.staged and state.collapse.commits and state.tokens.ratio != start_ratio:
                break
        # The session ends with spans staged and not committed, after earlier commits, and with a
        # ratio learned from usage.
        assert state.collapse.staged and state.collapse.commits, turn
        assert state.tokens.ratio != start_ratio
        staged = [s.collapse_id for s in state.collapse.staged]
        ratio, responses = state.tokens.ratio, state.tokens.responses
        # One more prompt, large enough that the next request must commit what is staged.
        push = UserMessage(content="Please also consider this note: " + "lorem ipsum dolor sit amet " * 800, timestamp="")
        expected = [next_request(session, []), next_request(session, [push])]
        await close_session(session)

        source = find_resume_source(settings, tmp_path, session.session_id, latest=False)
        assert source is not None
        resumed = await open_session(settings, tmp_path, resume=source)
        try:
            assert [next_request(resumed, []), next_request(resumed, [push])] == expected
            # Because the transcript holds both: the staged spans and the learned ratio.
            restored = resumed.projector.state
            assert [s.collapse_id for s in restored.collapse.staged] == staged
            assert restored.tokens.ratio == ratio
            # One reply is stored as an entry per block: the resume counts replies, as the live run did.
            assert restored.tokens.responses == responses
            [transcript] = transcript_files(tmp_path / "home")
            assert {"collapse-stage", "token-ratio"} <= {r["type"] for r in read_records(transcript)}
        finally:
            await close_session(resumed)
    finally:
        await close_session(session)
        server.stop()
