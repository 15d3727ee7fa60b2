"""A long session on claude-sonnet-5-5 with the compaction beta enforced, as the docs demand: the
emulator refuses any request that carries a `compaction` block without `compact-2026-09-04` in
its `anthropic-beta` header. Through two compactions the API wrote on its own trigger, a
/compact, a resume and a sub-agent, every request is answered 200 and every request that
carries the API's summary (or asks for one) names the beta: asserted on the headers the
emulator recorded. Before the header was read from the body, the first request after the API's
summary went out without it and the session ended there."""

from __future__ import annotations

import json
from typing import Any

from agent_repl.bootstrap import close_session, find_resume_source, open_session
from agent_repl.core.loop.compact import compact_now
from agent_repl.core.model.events import CompactionFinished, ToolResultEvent, TurnEnded
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer

from .compaction_support import RICH_FILES, OffsetClock, next_request_bytes, settings_for
from .conftest import agent_env, run_agent

WINDOW = 40_000
BETA = "compact-2026-09-04"
AGENT = "AGENT-SURVEY"
TASK_TURN = 8


def main_steps(turns: int) -> list[dict[str, Any]]:
    """Each turn thinks, reads a file and greps it, then answers; one turn starts a sub-agent."""
    steps: list[dict[str, Any]] = []
    for turn in range(turns):
        path = RICH_FILES[turn % len(RICH_FILES)]
        if turn == TASK_TURN:
            task = {"description": "Survey two modules", "prompt": f"{AGENT}: read two modules and say what they hold"}
            steps.append({"thinking": "A sub-agent can survey these.", "text": "Asking a sub-agent.",
                          "tools": [{"name": "Task", "input": task}]})
            steps.append({"thinking": "The survey is back.", "text": "The sub-agent surveyed them."})
            continue
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


def agent_steps() -> list[dict[str, Any]]:
    reads = [{"name": "Read", "input": {"file_path": str(path)}} for path in RICH_FILES[:2]]
    return [{"thinking": "Two reads.", "tools": reads}, {"text": "Both modules hold rendering helpers."}]


def carries_compaction(body: dict[str, Any]) -> bool:
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    return body.get("compaction") is not None or any(b.get("type") == "compaction" for b in blocks)


def betas(headers: dict[str, str]) -> list[str]:
    return [b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()]


def without_notes(session: Any) -> Any:
    """The session with no session-memory notes: notes current at a compaction are its summary and
    no request is made, and this test needs the API to write every one."""
    session.after_turn_hooks.clear()
    session.memory = None
    return session


async def run_turn(session: Any, text: str) -> list[Any]:
    events = [event async for event in session.run_turn(text)]
    ended = [e for e in events if isinstance(e, TurnEnded)]
    assert ended and ended[-1].reason == "completed", [e for e in events if e.kind == "error"]
    return events


async def test_every_request_carrying_the_apis_summary_names_its_beta_through_a_long_session(tmp_path):
    turns = 22
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": main_steps(turns), "agents": [{"prompt": AGENT, "steps": agent_steps()}]}),
        summarizer=AgentSummarizer(),
    )
    server.start()
    clock = OffsetClock()
    settings = settings_for(
        server, tmp_path, context_window=WINDOW, api_compaction=True, web_tools=False, compact_kept_tail_tokens=40_000
    )
    assert settings.model == "claude-sonnet-5-5"
    session = without_notes(await open_session(settings, tmp_path, clock=clock))
    triggers: list[str] = []
    task_results: list[ToolResultEvent] = []
    resumed_at = 0
    try:
        for turn in range(turns):
            if turn == 5:
                manual = compact_now(session, "manual")
                triggers += [e.trigger async for e in manual if isinstance(e, CompactionFinished)]
                assert manual.result is True
            expected = next_request_bytes(session)
            if not resumed_at and turn >= 12 and '"type": "compaction"' in expected:
                # Resumed while the view opens with the API's summary.
                await close_session(session)
                source = find_resume_source(settings, tmp_path, session.session_id, latest=False)
                session = without_notes(await open_session(settings, tmp_path, resume=source, clock=clock))
                assert next_request_bytes(session) == expected
                resumed_at = max(e.seq for e in server.recordings.messages)
            path = RICH_FILES[turn % len(RICH_FILES)]
            events = await run_turn(session, f"Turn {turn}: look at {path.name}, please (#{turn * 7919}).")
            triggers += [e.trigger for e in events if isinstance(e, CompactionFinished)]
            task_results += [e for e in events if isinstance(e, ToolResultEvent) and e.name == "Task"]
    finally:
        await close_session(session)
        server.stop()

    exchanges = list(server.recordings.messages)
    assert [e.status for e in exchanges if e.status != 200] == []  # no 400, and no retry of one
    # With thinking: every request asks for it, and the turns' thinking goes back signed.
    assert all(e.body["thinking"] == {"type": "adaptive", "display": "summarized"} for e in exchanges)
    assert any(b.get("type") == "thinking" for e in exchanges for m in e.body["messages"] for b in m["content"] if isinstance(b, dict))
    assert triggers.count("auto") >= 2 and triggers.count("manual") == 1, triggers
    # The /compact and at least one compaction on the automatic trigger were the API's own summaries.
    summaries = [e for e in exchanges if e.body.get("compaction") == {"type": "summarize"}]
    assert len(summaries) >= 2, len(summaries)
    carrying = [e for e in exchanges if carries_compaction(e.body)]
    assert len(carrying) > len(summaries)  # the later requests send the summary back too
    for exchange in carrying:
        assert BETA in betas(exchange.headers), (exchange.path, betas(exchange.headers))
    # The first request after each summary sends it back first, under the beta.
    for summary in summaries:
        # (a session-memory request, in the background, may come in between)
        after = next(e for e in exchanges[exchanges.index(summary) + 1 :] if request_kind(e.body) is None)
        assert after.body["messages"][0]["content"][0]["type"] == "compaction"
        assert BETA in betas(after.headers)
    # After the resume, the summary still goes back with its beta.
    assert resumed_at, "the session was never resumed with the summary in its view"
    after_resume = next(e for e in exchanges if e.seq > resumed_at)
    assert carries_compaction(after_resume.body) and BETA in betas(after_resume.headers)
    # The sub-agent ran and answered; its requests are in the record, all answered.
    [task] = task_results
    assert not task.is_error and "rendering helpers" in json.dumps(task.message.model_dump(mode="json"))
    agent_requests = [e for e in exchanges if AGENT in json.dumps(e.body["messages"][:1])]
    assert len(agent_requests) == 2 and {e.status for e in agent_requests} == {200}
    # A request that carries no beta input names no beta (it takes the SDK's plain call).
    plain = [e for e in exchanges if not carries_compaction(e.body) and "context_management" not in e.body]
    assert plain and all(BETA not in betas(e.headers) for e in plain)


def test_the_cli_sends_the_beta_after_a_compact_in_print_mode_and_after_a_resume(emulator, project, home):
    steps = [{"thinking": "Read it.", "text": "Reading.", "tools": [{"name": "Read", "input": {"file_path": str(project / "src" / "app.py")}}]},
             {"thinking": "Done.", "text": "It holds helpers."},
             {"thinking": "Again.", "text": "Going on from the summary."}]
    emulated = emulator(steps)
    env = agent_env(emulated, home)
    first = run_agent(["-p", "what is in that module?", "--output-format", "json"], cwd=project, env=env)
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]
    compacted = run_agent(["--resume", session_id, "-p", "/compact", "--output-format", "json"], cwd=project, env=env)
    assert compacted.returncode == 0, compacted.stderr
    assert json.loads(compacted.stdout)["local_command"] == "compact"
    later = run_agent(["--resume", session_id, "-p", "go on", "--output-format", "json"], cwd=project, env=env)
    assert later.returncode == 0, later.stderr
    assert json.loads(later.stdout)["result"] == "Going on from the summary."

    exchanges = list(emulated.server.recordings.messages)
    assert {e.status for e in exchanges} == {200}
    [summary] = [e for e in exchanges if "compaction" in e.body]
    assert BETA in betas(summary.headers)
    # The turn's request after the resume (a session-memory request may come and go around it).
    resumed = next(e for e in exchanges[exchanges.index(summary) + 1 :] if request_kind(e.body) is None)
    assert resumed.body["messages"][0]["content"][0]["type"] == "compaction" and BETA in betas(resumed.headers)
