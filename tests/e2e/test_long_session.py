"""Issue 4 acceptance: a 60-request session with real tool output, in process, over HTTP.

Every request repeats the previous request's prompt up to its last breakpoint (breakpoint markers
aside), except once, on purpose: the time-based microcompact after a 61-minute pause. Over the
session, the emulator reads at least 90% of all input tokens from its cache.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import rich

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.config.settings import load_settings
from agent_repl.core.model.events import TurnEnded
from agent_repl.core.model.messages import SystemMessage
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer

from .compaction_support import OffsetClock
from .conftest import read_records, strip_cache_control, transcript_files

RICH = Path(rich.__file__).parent
FILES = sorted((p for p in RICH.glob("*.py") if 9_000 < p.stat().st_size < 61_000), key=lambda p: p.name)


def scenario(turns: int) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for turn in range(turns):
        path = FILES[turn % len(FILES)]
        steps.append(
            {
                "text": f"Looking at {path.name}.",
                "tools": [
                    {"name": "Read", "input": {"file_path": str(path)}},
                    {"name": "Grep", "input": {"pattern": "def ", "path": str(path), "output_mode": "content", "-n": True}},
                    {"name": "Glob", "input": {"pattern": "*.py", "path": str(RICH)}},
                ],
            }
        )
        if turn == 4:
            # Ten results just under Bash's own limit: together over the per-message budget.
            steps.append(
                {"tools": [{"name": "Bash", "input": {"command": f"seq {i} 5000 | head -c 25000"}} for i in range(10)]}
            )
        else:
            steps.append({"tools": [{"name": "Bash", "input": {"command": f"wc -l {path} && cat {path} {path} {path} | head -c 150000"}}]})
        steps.append({"text": f"Done with {path.name}."})
    return steps


def messages_prefix_ok(before: dict, after: dict) -> bool:
    n = len(before["messages"])
    same_fixed = all(
        json.dumps(strip_cache_control(before[k])) == json.dumps(strip_cache_control(after[k])) for k in ("tools", "system")
    )
    same_messages = json.dumps(strip_cache_control(before["messages"])) == json.dumps(
        strip_cache_control(after["messages"][:n])
    )
    return same_fixed and same_messages


async def test_sixty_requests_keep_the_prefix_and_the_cache(tmp_path):
    turns = 20
    # Cache editing is our own beta, not the public API's: this test is about it, so it opts in.
    server = EmulatorServer(policy=ScriptPolicy({"steps": scenario(turns)}), cache_editing=True)
    server.start()
    clock = OffsetClock()
    project = tmp_path / "project"
    project.mkdir()
    env = {
        "AGENT_REPL_HOME": str(tmp_path / "home"),
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "sk-test",
    }
    # The cost-aware trigger would summarize this long session early; this test is about the prefix.
    overrides = {"skip_permissions": True, "compact_cost_trigger_min_window": 0}
    settings = load_settings(cwd=project, env=env, overrides=overrides)
    session = await open_session(settings, project, clock=clock)
    pause_before_turn = 12
    try:
        for turn in range(turns):
            if turn == pause_before_turn:
                clock.offset += timedelta(minutes=61)
                server.clock.advance(61 * 60)
            ended = [e async for e in session.run_turn(f"Please look at file number {turn}.") if isinstance(e, TurnEnded)]
            assert ended[0].reason == "completed", ended
    finally:
        await close_session(session)
        server.stop()

    # Session-memory extractions are forks beside the main thread, not links in its prefix chain.
    exchanges = [e for e in server.recordings.messages if e.status == 200 and request_kind(e.body) != "memory"]
    assert len(exchanges) == 3 * turns
    bodies = [e.body for e in exchanges]
    breaks = [i for i in range(1, len(bodies)) if not messages_prefix_ok(bodies[i - 1], bodies[i])]
    assert breaks == [3 * pause_before_turn], breaks

    # The deliberate break is the time-based microcompact, recorded once.
    [transcript] = transcript_files(tmp_path / "home")
    records = read_records(transcript)
    clears = [r for r in records if r["type"] == "microcompact-clear"]
    assert len(clears) == 1 and clears[0]["trigger"] == "time"
    assert "[Old tool result content cleared]" in json.dumps(bodies[3 * pause_before_turn])
    # The budget replaced the largest of the ten parallel results, and cache editing deleted old results.
    assert any(r["type"] == "content-replacement" for r in records)
    assert any(r["type"] == "cache-edit" for r in records)
    assert any(isinstance(m, SystemMessage) and m.subtype == "microcompact_boundary" for m in session.messages)

    # Each request that first carries a cache_edits delete still reads the prefix from the cache,
    # minus exactly the deleted results, and the API reports what was deleted.
    edited = [
        i
        for i in range(1, len(bodies))
        if json.dumps(bodies[i]).count('"cache_edits"') > json.dumps(bodies[i - 1]).count('"cache_edits"')
    ]
    assert edited
    for i in edited:
        before, after = exchanges[i - 1].usage, exchanges[i].usage
        newly_deleted = after["cache_deleted_input_tokens"] - before["cache_deleted_input_tokens"]
        assert newly_deleted > 0
        if i != 3 * pause_before_turn:
            assert after["cache_read_input_tokens"] == (
                before["cache_read_input_tokens"] + before["cache_creation_input_tokens"] - newly_deleted
            )

    tool_output = sum(
        len(json.dumps(r["message"]["content"])) for r in records if r["type"] == "user" and "toolUseResult" in r
    ) + sum(p.stat().st_size for p in (transcript.parent / transcript.stem / "tool-results").glob("*"))
    assert tool_output > 2_000_000

    totals = server.engine.usage_totals()
    input_total = (
        totals["input_tokens"] + totals["cache_write_5m_tokens"] + totals["cache_write_1h_tokens"] + totals["cache_read_tokens"]
    )
    share = totals["cache_read_tokens"] / input_total
    assert share >= 0.90, (share, totals)
    print(f"cache-read share {share:.3f}, tool output {tool_output:,} bytes, {len(bodies)} requests")
