"""API faults: 429, 529, 500, mid-stream errors, stalls and dropped connections on 20% of requests.

A scripted session of many turns runs in process against the emulator over HTTP. Every turn
runs Bash (which appends a token to a file, so an execution is counted by the filesystem, not by
a fake) and one of Read, Grep, Glob. The session must finish every turn, run no tool call twice,
and leave a transcript that loads without warnings with every tool_use answered. When retries
run out, the user gets one clear error and the next turn works.
"""

from __future__ import annotations

import io
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.config.settings import Settings, load_settings
from agent_repl.core.model.events import AgentEvent, ErrorEvent, RequestRetry, ToolResultEvent, TurnEnded
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.print_mode import run_print_mode
from agent_repl.transcript.loader import load_session

from .support import transcript_files, unanswered_in_history, unanswered_in_request

ALL_KINDS = "429|529|500|stream_error|stall|drop"
# The client gives up on a silent stream after this long (the default is 120 s).
IDLE_TIMEOUT = "0.5"


def settings_for(server: EmulatorServer, home: Path, cwd: Path, **overrides: Any) -> Settings:
    env = {
        "AGENT_REPL_HOME": str(home),
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-faults",
        "AGENT_REPL_STREAM_IDLE_TIMEOUT": IDLE_TIMEOUT,
    }
    return load_settings(cwd=cwd, env=env, overrides={"skip_permissions": True, **overrides})


def scenario(turns: int, project: Path, log: Path) -> list[dict[str, Any]]:
    readers = [
        {"name": "Read", "input": {"file_path": str(project / "README.md")}},
        {"name": "Grep", "input": {"pattern": "TODO", "path": str(project), "output_mode": "content"}},
        {"name": "Glob", "input": {"pattern": "**/*.py", "path": str(project)}},
    ]
    steps: list[dict[str, Any]] = []
    for turn in range(turns):
        steps.append(
            {
                "text": f"Turn {turn}: recording it.",
                "tools": [
                    {"name": "Bash", "input": {"command": f"echo run-{turn} >> {log}"}},
                    readers[turn % len(readers)],
                ],
            }
        )
        steps.append({"text": f"Turn {turn} is recorded."})
    return steps


async def collect(session: Any, prompt: str) -> list[AgentEvent]:
    return [event async for event in session.run_turn(prompt)]


@pytest.mark.timeout(1800)
async def test_a_long_session_survives_injected_faults_on_a_fifth_of_requests(project, home, size, figures):
    turns = size(12, 100)
    log = project / "executions.log"
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": scenario(turns, project, log)}),
        faults=f"rate=0.2,seed=7,kinds={ALL_KINDS},retry_after_ms=5,stall_seconds=30",
    )
    server.start()
    started = time.monotonic()
    retries_seen = 0
    user_retries = 0
    try:
        session = await open_session(settings_for(server, home, project), project)
        try:
            for turn in range(turns):
                prompt = f"Please record turn {turn}."
                # When the retries run out the turn ends with one clear error; the user says "go on".
                for _attempt in range(4):
                    events = await collect(session, prompt)
                    retries_seen += sum(isinstance(e, RequestRetry) for e in events)
                    [ended] = [e for e in events if isinstance(e, TurnEnded)]
                    if ended.reason == "completed":
                        break
                    assert ended.reason == "error"
                    [error] = [e for e in events if isinstance(e, ErrorEvent)]
                    assert error.message.startswith(("API error", "The API", "The connection to the API")), error
                    user_retries += 1
                    prompt = "That failed; please go on."
                assert ended.reason == "completed", turn
                assert ended.final_text == f"Turn {turn} is recorded."
        finally:
            await close_session(session)
    finally:
        server.stop()
    elapsed = time.monotonic() - started

    # Every Bash call ran exactly once: the file is the witness.
    runs = Counter(log.read_text().split())
    assert runs == Counter({f"run-{t}": 1 for t in range(turns)})

    # The stored history answers every tool_use exactly once, and the file loads cleanly.
    [transcript] = transcript_files(home)
    loaded = load_session(transcript)
    assert loaded.warnings == []
    assert unanswered_in_history(loaded.messages) == []
    results = Counter(r.tool_use_id for m in loaded.messages if m.type == "user" for r in m.tool_results())
    assert results and set(results.values()) == {1}
    assert len(results) == 2 * turns

    exchanges = server.recordings.messages
    faults = Counter(e.fault for e in exchanges if e.fault)
    # No request the emulator received was invalid (a 400 would mean a broken history).
    assert [e.status for e in exchanges if e.status == 400] == []
    for exchange in exchanges:
        assert unanswered_in_request(exchange.body) == []
    assert set(faults) == set(ALL_KINDS.split("|"))
    figures.update(
        turns=turns,
        requests=len(exchanges),
        faults=sum(faults.values()),
        by_kind=dict(sorted(faults.items())),
        loop_retries=retries_seen,
        turns_the_user_had_to_resend=user_retries,
        tool_runs=sum(runs.values()),
        double_runs=sum(n - 1 for n in runs.values() if n > 1),
        seconds=round(elapsed, 1),
    )


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", ["529", "stall", "drop", "stream_error"])
async def test_when_retries_run_out_one_clear_message_and_the_next_turn_works(project, home, kind):
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": [{"text": "First answer."}, {"text": "Second answer."}]}),
        faults="retry_after_ms=5,stall_seconds=30",
    )
    server.start()
    try:
        # More failures in a row than the SDK (max_retries=1) and the loop (3 stream retries) retry.
        server.faults.next(kind, 12)
        session = await open_session(settings_for(server, home, project, max_retries=1), project)
        out, err = io.StringIO(), io.StringIO()
        try:
            status = await run_print_mode(session, "first", out=out, err=err)
            assert status == 1 and out.getvalue() == ""
            lines = err.getvalue().splitlines()
            assert len(lines) == 1, lines
            assert lines[0].startswith("agent-repl: ")
            assert {
                "529": "agent-repl: API error 529 (overloaded_error): Overloaded",
                "stall": "agent-repl: The API stopped sending mid-reply: no data within the stream idle timeout "
                "(ReadTimeout); gave up after 3 retries.",
                "drop": "agent-repl: The connection to the API broke mid-reply (RemoteProtocolError: ",
                "stream_error": "agent-repl: API error 200 (overloaded_error): Overloaded; gave up after 3 retries.",
            }[kind] in lines[0]
            assert session.messages[-1].type == "system"

            server.faults.clear()
            events = await collect(session, "second")
            [ended] = [e for e in events if isinstance(e, TurnEnded)]
            assert ended.reason == "completed" and ended.final_text == "First answer."
            assert not [e for e in events if isinstance(e, ErrorEvent)]
        finally:
            await close_session(session)
    finally:
        server.stop()
    [transcript] = transcript_files(home)
    assert load_session(transcript).warnings == []


@pytest.mark.timeout(120)
async def test_a_stalled_stream_fails_within_the_idle_timeout_not_the_stall(project, home):
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": [{"text": "After the stall."}]}), faults="stall_seconds=60"
    )
    server.start()
    try:
        server.faults.next("stall")
        session = await open_session(settings_for(server, home, project), project)
        try:
            started = time.monotonic()
            events = await collect(session, "hello")
            elapsed = time.monotonic() - started
        finally:
            await close_session(session)
    finally:
        server.stop()
    [ended] = [e for e in events if isinstance(e, TurnEnded)]
    assert ended.reason == "completed" and ended.final_text == "After the stall."
    [retry] = [e for e in events if isinstance(e, RequestRetry)]
    assert retry.error.startswith("The API stopped sending mid-reply")
    # Not a wall-clock assertion on speed: only that the 60 s stall was not waited out.
    assert elapsed < 30


def test_the_idle_timeout_is_a_setting_with_a_sane_default(tmp_path):
    assert Settings().stream_idle_timeout == 120.0
    settings = load_settings(cwd=tmp_path, env={"AGENT_REPL_HOME": str(tmp_path), "AGENT_REPL_STREAM_IDLE_TIMEOUT": "2.5"})
    assert settings.stream_idle_timeout == 2.5


async def test_no_tool_result_is_stored_twice_when_a_reply_is_cut_after_its_tool_use(project, home):
    # The stream is cut right after the tool_use block starts: nothing may run until a whole reply arrives.
    log = project / "executions.log"
    steps = [{"tools": [{"name": "Bash", "input": {"command": f"echo once >> {log}"}}]}, {"text": "Done."}]
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps}), faults="retry_after_ms=5")
    server.start()
    try:
        server.faults.next("drop")
        server.faults.next("stream_error")
        session = await open_session(settings_for(server, home, project), project)
        try:
            events = await collect(session, "run it")
        finally:
            await close_session(session)
    finally:
        server.stop()
    assert log.read_text() == "once\n"
    assert len([e for e in events if isinstance(e, ToolResultEvent)]) == 1
    assert len([e for e in events if isinstance(e, RequestRetry)]) == 2
