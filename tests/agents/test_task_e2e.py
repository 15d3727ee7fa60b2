"""Task sub-agents through the real loop against the emulator over HTTP, with the real SDK.

The main conversation and each sub-agent are scripted apart (the emulator tells a sub-agent's
requests by its prompt), so two sub-agents running at once each get their own steps.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agent_repl.bootstrap import close_session
from agent_repl.core.model.events import SubagentProgress, ToolResultEvent
from agent_repl.core.model.messages import UserMessage
from agent_repl.core.permissions.rules import Decision

from .support import bodies, emulator, read_jsonl, run, session_on, wire_tool_ids

ANSWER_A = "TODOs: src/app.py line 2 and src/util.py line 1."
ANSWER_B = "README.md says it is a tiny demo project for tests."


def two_tasks(project: Path) -> tuple[list[dict], list[dict]]:
    main = [
        {
            "text": "I'll ask two sub-agents.",
            "tools": [
                {"name": "Task", "input": {"description": "Find the TODOs", "prompt": "AGENT-A: find every TODO in src"}},
                {"name": "Task", "input": {"description": "Summarize README", "prompt": "AGENT-B: what is this project?"}},
            ],
        },
        {"text": "Both sub-agents answered."},
    ]
    agents = [
        {
            "prompt": "AGENT-A",
            "steps": [
                {"tools": [{"name": "Grep", "input": {"pattern": "TODO", "path": "src", "output_mode": "content"}}]},
                {"tools": [
                    {"name": "Read", "input": {"file_path": str(project / "src" / "app.py")}},
                    {"name": "Read", "input": {"file_path": str(project / "src" / "util.py")}},
                ]},
                {"text": ANSWER_A},
            ],
        },
        {
            "prompt": "AGENT-B",
            "steps": [
                {"tools": [{"name": "Glob", "input": {"pattern": "*.md"}}]},
                {"tools": [{"name": "Read", "input": {"file_path": str(project / "README.md")}}]},
                {"text": ANSWER_B},
            ],
        },
    ]
    return main, agents


async def test_two_concurrent_tasks_each_with_several_tool_calls_return_both_answers(project, home):
    main, agents = two_tasks(project)
    server = emulator(main, agents)
    session = await session_on(server, project, home)
    try:
        events = await run(session, "Use two sub-agents: one for the TODOs, one for the README.")
        assert events[-1].reason == "completed"
        results = {e.tool_use_id: e for e in events if isinstance(e, ToolResultEvent)}
        assert [r.name for r in results.values()] == ["Task", "Task"]
        assert not any(r.is_error for r in results.values())
        answers = sorted(r.message.tool_results()[0].text() for r in results.values())
        assert answers == sorted([ANSWER_A, ANSWER_B])

        # Each sub-agent made its own requests: three each, with the read-only tools only.
        a, b = bodies(server, "AGENT-A"), bodies(server, "AGENT-B")
        assert len(a) == 3 and len(b) == 3
        assert [t["name"] for t in a[0]["tools"]] == ["Glob", "Grep", "Read"]
        # They ran at the same time: each one's first request came before the other's last.
        order = [next(iter(m for m in ("AGENT-A", "AGENT-B") if m in json.dumps(e.body["messages"][0])), "main")
                 for e in server.recordings.messages if e.status == 200]
        assert order.index("AGENT-B") < len(order) - 1 - order[::-1].index("AGENT-A")
        assert order.index("AGENT-A") < len(order) - 1 - order[::-1].index("AGENT-B")

        # The parent's view holds the two Task calls and their answers, none of the sub-agents' calls.
        parent = bodies(server)
        assert len(parent) == 2
        child_ids = set().union(*(wire_tool_ids(x) for x in a + b))
        assert len(child_ids) == 5
        assert wire_tool_ids(parent[1]) == set(results)
        assert not child_ids & {b.tool_use_id for m in session.messages if isinstance(m, UserMessage) for b in m.tool_results()}
        last_user = parent[1]["messages"][-1]["content"]
        sent = sorted(b["content"].split("\n[id:")[0] for b in last_user if b.get("type") == "tool_result")
        assert sent == sorted([ANSWER_A, ANSWER_B])
        # The tool list stays the same bytes, Task sorted in, listing the agent types.
        assert json.dumps(parent[0]["tools"]) == json.dumps(parent[1]["tools"])
        task = next(t for t in parent[0]["tools"] if t["name"] == "Task")
        assert "- general-purpose: " in task["description"] and "(Tools: Glob, Grep, Read)" in task["description"]
        assert set(task["input_schema"]["properties"]) == {"description", "prompt", "subagent_type"}
        assert task["input_schema"]["required"] == ["description", "prompt"]

        # Their progress streamed into the parent's blocks: each Task got its sub-agent's calls and results.
        progress = [e for e in events if isinstance(e, SubagentProgress)]
        assert {e.tool_use_id for e in progress} == set(results)
        assert len(progress) == 10

        # Sidechain transcripts, as Claude Code lays them out, linked to the Task calls.
        subagents = Path(session.sink.path).with_suffix("") / "subagents"  # type: ignore[attr-defined]
        metas = {json.loads(p.read_text())["toolUseId"]: p for p in subagents.glob("agent-*.meta.json")}
        assert set(metas) == set(results)
        stored = [r for r in read_jsonl(Path(session.sink.path)) if r.get("toolUseResult")]  # type: ignore[attr-defined]
        for record in stored:
            agent_id = record["toolUseResult"]["agentId"]
            tool_use_id = record["message"]["content"][0]["tool_use_id"]
            assert metas[tool_use_id].name == f"agent-{agent_id}.meta.json"
            calls = record["toolUseResult"]["totalToolUseCount"]
            assert record["toolUseResult"]["status"] == "completed" and calls in (2, 3)
            side = read_jsonl(subagents / f"agent-{agent_id}.jsonl")
            assert {r["isSidechain"] for r in side} == {True} and {r["agentId"] for r in side} == {agent_id}
            assert {r["sessionId"] for r in side} == {session.session_id}
            assert side[0]["parentUuid"] is None
            assert all(r["parentUuid"] == p["uuid"] for p, r in zip(side, side[1:], strict=False))
            assert sum(1 for r in side if r["type"] == "user" and isinstance(r["message"]["content"], list)
                       and r["message"]["content"][0].get("type") == "tool_result") == calls
        # The session's usage and cost count the sub-agents' requests too.
        answered = [e for e in server.recordings.messages if e.status == 200]
        # Sub-agents ask for the thinking's text as the parent does (Sonnet 5.5's notes are thinking).
        assert {json.dumps(e.body.get("thinking")) for e in answered} == {'{"type": "adaptive", "display": "summarized"}'}
        assert session.usage_total.output_tokens == sum(e.usage["output_tokens"] for e in answered)
        assert session.usage_total.output_tokens > events[-1].usage.output_tokens
    finally:
        await close_session(session)
        server.stop()


async def test_a_failing_sub_agent_is_a_tool_error_and_the_session_goes_on(project, home):
    main = [
        {"tools": [{"name": "Task", "input": {"description": "Broken", "prompt": "AGENT-X: go", "subagent_type": "nope"}}]},
        {"tools": [{"name": "Task", "input": {"description": "Refuses", "prompt": "AGENT-R: go"}}]},
        {"text": "Neither worked; carrying on."},
    ]
    agents = [{"prompt": "AGENT-R", "steps": [{"stop_reason": "refusal", "stop_details": {"category": "cyber"}}]}]
    server = emulator(main, agents)
    session = await session_on(server, project, home)
    try:
        events = await run(session, "try the sub-agents")
        assert events[-1].reason == "completed"
        unknown, refused = [e for e in events if isinstance(e, ToolResultEvent)]
        assert unknown.is_error and "no agent type 'nope'. Available: general-purpose" in unknown.message.tool_results()[0].text()
        assert refused.is_error and "the sub-agent did not finish" in refused.message.tool_results()[0].text()
        assert "declined" in refused.message.tool_results()[0].text()
        assert bodies(server)[-1]["messages"][-1]["content"][-1]["is_error"] is True
    finally:
        await close_session(session)
        server.stop()


async def test_interrupting_the_parent_interrupts_its_sub_agents(project, home):
    main = [
        {"tools": [
            {"name": "Task", "input": {"description": "One", "prompt": "AGENT-A: wait"}},
            {"name": "Task", "input": {"description": "Two", "prompt": "AGENT-B: wait"}},
        ]},
        {"text": "never reached"},
    ]
    agents = [
        {"prompt": marker, "steps": [{"tools": [{"name": "Bash", "input": {"command": f"sleep 30 # {marker}"}}]}, {"text": "done"}]}
        for marker in ("AGENT-A", "AGENT-B")
    ]
    server = emulator(main, agents)
    session = await session_on(server, project, home, subagent_tools=["Bash", "Read"])
    try:
        events = []
        async for event in session.run_turn("start two slow sub-agents"):
            events.append(event)
            if isinstance(event, SubagentProgress) and sum(isinstance(e, SubagentProgress) for e in events) == 2:
                session.interrupt()
        assert events[-1].reason == "interrupted"
        results = [e for e in events if isinstance(e, ToolResultEvent)]
        assert [r.is_error for r in results] == [True, True]
        assert all("interrupted" in r.message.tool_results()[0].text() for r in results)
        assert len(bodies(server)) == 1  # the parent never went on
    finally:
        await asyncio.wait_for(close_session(session), 30)
        server.stop()


async def test_a_sub_agents_bash_asks_the_user_one_question_at_a_time(project, home):
    main = [
        {"tools": [
            {"name": "Task", "input": {"description": "One", "prompt": "AGENT-A: run it"}},
            {"name": "Task", "input": {"description": "Two", "prompt": "AGENT-B: run it"}},
        ]},
        {"text": "Both ran."},
    ]
    agents = [
        {"prompt": marker, "steps": [{"tools": [{"name": "Bash", "input": {"command": f"echo {marker.lower()}"}}]}, {"text": "ran"}]}
        for marker in ("AGENT-A", "AGENT-B")
    ]
    server = emulator(main, agents)
    session = await session_on(server, project, home, skip_permissions=False, subagent_tools=["Bash", "Read"])
    asked: list[str] = []
    open_questions = 0

    async def ask(request):  # type: ignore[no-untyped-def]
        nonlocal open_questions
        open_questions += 1
        assert open_questions == 1, "two questions at once"
        asked.append(f"{request.tool_name}: {request.key}")
        await asyncio.sleep(0.5)
        open_questions -= 1
        return Decision.ALLOW_ONCE

    session.ask = ask
    try:
        events = await run(session, "run two commands in sub-agents")
        assert events[-1].reason == "completed"
        assert sorted(asked) == ["Bash: echo agent-a", "Bash: echo agent-b"]
        outputs = [json.dumps(b["messages"][-1]) for b in bodies(server, "AGENT-A")[1:] + bodies(server, "AGENT-B")[1:]]
        assert any("agent-a" in o for o in outputs) and any("agent-b" in o for o in outputs)
    finally:
        await close_session(session)
        server.stop()
