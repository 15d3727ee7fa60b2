"""Issue 4 acceptance for snip: the model's Snip tool and the user's snip API remove exactly the
named span from the next request, and the history still holds it (docs/architecture.md 5.3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_repl.bootstrap import close_session, open_session
from agent_repl.context.ids import short_id
from agent_repl.context.snip import snip_messages
from agent_repl.core.config.settings import load_settings
from agent_repl.core.model.events import TurnEnded
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

from .conftest import agent_env, read_records, run_agent, strip_cache_control, transcript_files

MARKER_COMMAND = "printf 'marker-%s\\n' alpha beta gamma"


def without_span(messages: list[dict[str, Any]], tool_use_id: str) -> list[dict[str, Any]]:
    """The wire messages with one tool call and its result taken out (and emptied messages dropped)."""
    kept = []
    for message in strip_cache_control(messages):
        content = [
            b
            for b in message["content"]
            if not (b.get("type") == "tool_use" and b["id"] == tool_use_id)
            and not (b.get("type") == "tool_result" and b["tool_use_id"] == tool_use_id)
        ]
        if content:
            kept.append({**message, "content": content})
    merged: list[dict[str, Any]] = []
    for message in kept:  # neighbours of one role become one message, as normalization does
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1] = {**merged[-1], "content": merged[-1]["content"] + message["content"]}
        else:
            merged.append(message)
    return merged


def tool_use_ids(body: dict[str, Any]) -> list[str]:
    return [
        b["id"]
        for m in body["messages"]
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use"
    ]


def test_the_model_snips_an_earlier_tool_result_and_the_next_request_lacks_exactly_that_pair(
    emulator, project, home
):
    first = emulator(
        [{"tools": [{"name": "Bash", "input": {"command": MARKER_COMMAND}}]}, {"text": "Printed."}]
    )
    done = run_agent(
        ["-p", "print the markers", "--output-format", "json", "--dangerously-skip-permissions"],
        cwd=project,
        env=agent_env(first, home),
    )
    assert done.returncode == 0, done.stderr
    session_id = json.loads(done.stdout)["session_id"]
    [transcript] = transcript_files(home)
    records = read_records(transcript)
    [result_record] = [r for r in records if r["type"] == "user" and "toolUseResult" in r]
    bash_id = result_record["message"]["content"][0]["tool_use_id"]
    tag = short_id(result_record["uuid"])

    second = emulator(
        [
            {
                "text": "Tidying up.",
                "tools": [{"name": "Snip", "input": {"start_id": tag, "reason": "markers digested"}}],
            },
            {"text": "Snipped."},
            {"text": "Still here."},
        ]
    )
    env = agent_env(second, home)
    resumed = run_agent(
        ["--resume", session_id, "-p", "drop the marker output", "--output-format", "json"],
        cwd=project,
        env=env,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["result"] == "Snipped."
    before, after = second.bodies()
    assert "marker-beta" in json.dumps(before) and bash_id in tool_use_ids(before)
    # The request after the Snip call is the one before it minus exactly the Bash call and its result,
    # then the Snip exchange.
    expected = without_span(before["messages"], bash_id)
    assert strip_cache_control(after["messages"][: len(expected)]) == expected
    assert len(after["messages"]) == len(expected) + 2
    assert "marker-beta" not in json.dumps(after) and bash_id not in tool_use_ids(after)
    snip_result = after["messages"][-1]["content"][0]
    assert snip_result["type"] == "tool_result" and not snip_result.get("is_error")
    assert "Snipped 2 messages" in snip_result["content"]

    # The history keeps the pair; the snip is a record beside it.
    records = read_records(transcript)
    assert [r["uuid"] for r in records if r["type"] == "user" and "toolUseResult" in r][0] == result_record[
        "uuid"
    ]
    [snip] = [r for r in records if r["type"] == "snip"]
    assert snip["source"] == "model" and snip["reason"] == "markers digested"
    assert result_record["uuid"] in snip["uuids"] and len(snip["uuids"]) == 2

    # A later resume rebuilds the snip from the record: the pair stays out.
    again = run_agent(
        ["--resume", session_id, "-p", "anything else?", "--output-format", "json"], cwd=project, env=env
    )
    assert again.returncode == 0, again.stderr
    last = second.bodies()[-1]
    assert "marker-beta" not in json.dumps(last) and bash_id not in tool_use_ids(last)
    assert "print the markers" in json.dumps(last)


async def test_the_user_snip_api_removes_a_span_from_the_next_request_in_process(tmp_path: Path):
    server = EmulatorServer(
        policy=ScriptPolicy(
            {
                "steps": [
                    {"tools": [{"name": "Bash", "input": {"command": MARKER_COMMAND}}]},
                    {"text": "Printed."},
                    {"text": "Noted."},
                    {"text": "Done."},
                ]
            }
        )
    )
    server.start()
    project = tmp_path / "project"
    project.mkdir()
    env = {
        "AGENT_REPL_HOME": str(tmp_path / "home"),
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "sk-t",
    }
    settings = load_settings(cwd=project, env=env, overrides={"skip_permissions": True})
    session = await open_session(settings, project)
    try:
        ended = [e async for e in session.run_turn("print the markers") if isinstance(e, TurnEnded)]
        assert ended[0].reason == "completed"
        reply = session.messages[-1]
        ended = [e async for e in session.run_turn("thanks") if isinstance(e, TurnEnded)]
        prompt = next(m for m in session.messages if m.type == "user" and not m.is_meta)
        # The whole first turn, from the prompt through the final reply (the latest turn is protected).
        done = await snip_messages(
            session, session.projector, short_id(prompt.uuid), reply.uuid, reason="old"
        )
        assert not done.is_error, done.user_text
        assert done.record is not None and len(done.record.uuids) == 4
        history_before = list(session.messages)
        ended = [e async for e in session.run_turn("what now?") if isinstance(e, TurnEnded)]
        assert ended[0].reason == "completed"
    finally:
        await close_session(session)
        server.stop()
    bodies = [e.body for e in server.recordings.messages if e.status == 200]
    last = json.dumps(bodies[-1])
    assert "print the markers" in json.dumps(bodies[-2]) and "marker-beta" in json.dumps(bodies[-2])
    assert "print the markers" not in last and "marker-beta" not in last and "Printed." not in last
    assert [m["role"] for m in bodies[-1]["messages"]] == ["user", "assistant", "user"]
    assert "thanks" in last and "Noted." in last
    assert session.messages[: len(history_before)] == history_before
    [transcript] = transcript_files(tmp_path / "home")
    [snip] = [r for r in read_records(transcript) if r["type"] == "snip"]
    assert snip["source"] == "user" and snip["uuids"] == done.record.uuids
