"""MCP servers configured by `.mcp.json` and settings, through the real loop against the emulator.

Each test starts the test server (the official SDK's server side) as a real process, lets a
scripted model call its tools, and checks the exact request bodies the emulator recorded and the
transcript on disk.
"""

from __future__ import annotations

import json
import sys

from agent_repl.bootstrap import close_session
from agent_repl.commands import CommandContext, SessionHolder, default_registry
from agent_repl.commands.results import McpReport
from agent_repl.core.model.events import ErrorEvent, SystemMessageEvent, ToolResultEvent, TurnEnded
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

from .conftest import stdio_server, write_mcp_json
from .support import last_result, main_bodies, records, run, session_on, tool_names


def emulator(steps: list[dict]) -> EmulatorServer:
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps}))
    server.start()
    return server


def result_records(session) -> list[dict]:
    return [
        block
        for record in records(session)
        if record.get("type") == "user" and isinstance(record["message"]["content"], list)
        for block in record["message"]["content"]
        if block.get("type") == "tool_result"
    ]


async def mcp_report(session) -> McpReport:
    registry = default_registry()
    result = await registry.run("/mcp", CommandContext(SessionHolder(session, None), registry))  # type: ignore[arg-type]
    assert isinstance(result, McpReport)
    return result


async def test_a_stdio_server_from_mcp_json_gives_tools_whose_results_reach_the_wire(project, home):
    write_mcp_json(project, {"demo": stdio_server()})
    server = emulator(
        [
            {"tools": [{"name": "mcp__demo__echo", "input": {"text": "hello"}}]},
            {"tools": [{"name": "mcp__demo__picture", "input": {}}]},
            {"tools": [{"name": "mcp__demo__big", "input": {"lines": 4000}}]},
            {"text": "All three came back."},
        ]
    )
    session = await session_on(server, project, home)
    try:
        events = await run(session, "use the demo server")
        assert events[-1].reason == "completed"
        results = [e for e in events if isinstance(e, ToolResultEvent)]
        assert [(r.name, r.is_error) for r in results] == [
            ("mcp__demo__echo", False),
            ("mcp__demo__picture", False),
            ("mcp__demo__big", False),
        ]
        bodies = main_bodies(server)
        assert len(bodies) == 4
        # The tool list is the same bytes in every request, the server's tools sorted in by name.
        assert all(json.dumps(b["tools"]) == json.dumps(bodies[0]["tools"]) for b in bodies)
        names = tool_names(bodies[0])
        assert names == sorted(names)
        assert {"mcp__demo__echo", "mcp__demo__picture", "mcp__demo__crash", "Read", "Bash"} <= set(names)
        echo = next(t for t in bodies[0]["tools"] if t["name"] == "mcp__demo__echo")
        assert echo["description"] == "Echo the text back, prefixed with 'echo: '."
        assert echo["input_schema"]["properties"]["text"]["type"] == "string"
        assert echo["input_schema"]["required"] == ["text"]
        assert "defer_loading" not in echo and "ToolSearch" not in names
        # Text as text, the image as an image block the model reads, a long result as a preview.
        assert last_result(bodies[1])["content"].startswith("echo: hello")
        picture = last_result(bodies[2])["content"]
        assert picture[0]["type"] == "image" and picture[0]["source"]["media_type"] == "image/png"
        assert picture[1]["type"] == "text" and picture[1]["text"].startswith("a red pixel")
        big = last_result(bodies[3])["content"]
        assert big.startswith("<persisted-output>") and "line 000000 of the big output" in big
        saved = session.tool_results_dir / f"{last_result(bodies[3])['tool_use_id']}.txt"
        assert saved.read_text().count("\n") == 3999
        # The transcript keeps what the model saw.
        stored = result_records(session)
        assert stored[0]["content"] == "echo: hello"
        assert stored[1]["content"][0]["type"] == "image"
        assert stored[2]["content"].startswith("<persisted-output>")
    finally:
        await close_session(session)
        server.stop()


async def test_a_streamable_http_server_gets_its_headers_with_variables_expanded(project, home, http_server, monkeypatch):
    monkeypatch.setenv("MCP_TEST_TOKEN", "t0ken-for-the-test")
    write_mcp_json(
        project,
        {"web": {"type": "http", "url": http_server, "headers": {"Authorization": "Bearer ${MCP_TEST_TOKEN}"}}},
    )
    server = emulator(
        [
            {"tools": [{"name": "mcp__web__add", "input": {"a": 2, "b": 40}}]},
            {"tools": [{"name": "mcp__web__headers", "input": {}}]},
            {"text": "done"},
        ]
    )
    session = await session_on(server, project, home)
    try:
        events = await run(session, "use the web server")
        assert events[-1].reason == "completed"
        bodies = main_bodies(server)
        assert last_result(bodies[1])["content"].startswith("42")
        assert last_result(bodies[2])["content"].startswith("Bearer t0ken-for-the-test")
        assert json.dumps(bodies[2]["tools"]) == json.dumps(bodies[0]["tools"])
        report = await mcp_report(session)
        (web,) = report.servers
        assert (web.name, web.status, web.scope) == ("web", "connected", "project")
        assert web.transport == f"http {http_server}"
        assert "mcp__web__headers" in [t.name for t in web.tools]
    finally:
        await close_session(session)
        server.stop()


async def test_a_server_that_crashes_mid_session_is_a_clear_message_and_the_session_goes_on(project, home):
    write_mcp_json(project, {"demo": stdio_server()})
    server = emulator(
        [
            {"tools": [{"name": "mcp__demo__echo", "input": {"text": "before"}}]},
            {"tools": [{"name": "mcp__demo__crash", "input": {}}]},
            {"tools": [{"name": "mcp__demo__echo", "input": {"text": "after"}}]},
            {"tools": [{"name": "Read", "input": {"file_path": str(project / "README.md")}}]},
            {"text": "The demo server is gone; the rest works."},
            {"text": "Still here."},
        ]
    )
    session = await session_on(server, project, home)
    try:
        events = await run(session, "crash it")
        assert events[-1].reason == "completed"
        assert not [e for e in events if isinstance(e, ErrorEvent)]
        results = [e for e in events if isinstance(e, ToolResultEvent)]
        assert [(r.name, r.is_error) for r in results] == [
            ("mcp__demo__echo", False),
            ("mcp__demo__crash", True),
            ("mcp__demo__echo", True),
            ("Read", False),
        ]
        notices = [e.message for e in events if isinstance(e, SystemMessageEvent)]
        assert len(notices) == 1 and notices[0].level == "warning"
        assert notices[0].content.startswith("MCP server 'demo' stopped working: it exited or closed the connection")
        assert "test server: crashing on purpose" in notices[0].content
        bodies = main_bodies(server)
        crashed, after = last_result(bodies[2]), last_result(bodies[3])
        assert crashed["is_error"] is True
        assert crashed["content"].startswith(
            "Error: the MCP server 'demo' went away during the call: it exited or closed the connection; "
            "its stderr ended with: test server: crashing on purpose. "
            "Its tools cannot be used for the rest of this session."
        )
        assert after["is_error"] is True
        assert after["content"].startswith("Error: the MCP server 'demo' is not connected: it exited")
        assert "# Demo project" in last_result(bodies[4])["content"]
        # The dead server's tools stay in the list: the prefix the cache holds is unchanged.
        assert all(json.dumps(b["tools"]) == json.dumps(bodies[0]["tools"]) for b in bodies)
        # The next turn works, and the notice is in the transcript, not in what the model sees.
        second = await run(session, "anything else?")
        assert second[-1].reason == "completed" and second[-1].final_text == "Still here."
        stored = [r for r in records(session) if r.get("type") == "system" and r.get("subtype") == "informational"]
        assert [r["content"] for r in stored] == [notices[0].content]
        assert "stopped working" not in json.dumps(main_bodies(server)[-1]["messages"])
        (demo,) = (await mcp_report(session)).servers
        assert demo.status == "failed" and "crashing on purpose" in demo.error
    finally:
        await close_session(session)
        server.stop()


async def test_servers_that_fail_to_start_are_reported_and_the_others_work(project, home):
    write_mcp_json(
        project,
        {
            "good": stdio_server(),
            "missing": {"command": str(project / "no-such-server")},
            "quits": {"command": sys.executable, "args": ["-c", "import sys; print('bad config', file=sys.stderr); sys.exit(2)"]},
            "needs": {"command": "${MCP_TEST_UNSET_VARIABLE}"},
            "broken": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
        },
    )
    server = emulator([{"tools": [{"name": "mcp__good__add", "input": {"a": 1, "b": 1}}]}, {"text": "ok"}])
    session = await session_on(server, project, home)
    try:
        events = await run(session, "hello")
        assert events[-1].reason == "completed"
        notices = {e.message.content for e in events if isinstance(e, SystemMessageEvent)}
        by_server = {n.split("'")[1]: n for n in notices if n.startswith("MCP server '")}
        assert set(by_server) == {"missing", "quits", "needs"}
        assert "the command was not found" in by_server["missing"]
        assert "bad config" in by_server["quits"]
        assert "needs the environment variable MCP_TEST_UNSET_VARIABLE" in by_server["needs"]
        (broken,) = [n for n in notices if "'broken'" in n]
        assert broken.startswith(f"{project / '.mcp.json'}: MCP server 'broken' was not started: ")
        assert 'type must be "stdio"' in broken
        assert last_result(main_bodies(server)[1])["content"].startswith("2")
        assert [n for n in tool_names(main_bodies(server)[0]) if n.startswith("mcp__")] == [
            f"mcp__good__{t}" for t in sorted(["add", "big", "crash", "echo", "env", "headers", "picture", "slow"])
        ]
        report = await mcp_report(session)
        assert {s.name: s.status for s in report.servers} == {
            "good": "connected",
            "missing": "failed",
            "quits": "failed",
            "needs": "failed",
        }
    finally:
        await close_session(session)
        server.stop()


async def test_a_server_that_never_answers_times_out_and_the_session_starts_without_it(project, home):
    write_mcp_json(project, {"hangs": {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"]}})
    server = emulator([{"text": "ok"}])
    session = await session_on(server, project, home, mcp_startup_timeout=1)
    try:
        events = await run(session, "hello")
        assert events[-1].reason == "completed"
        notices = [e.message.content for e in events if isinstance(e, SystemMessageEvent)]
        assert notices == ["MCP server 'hangs' failed to start: did not answer within 1 s"]
        assert not [n for n in tool_names(main_bodies(server)[0]) if n.startswith("mcp__")]
    finally:
        await close_session(session)
        server.stop()


async def test_project_servers_wait_for_trust_and_each_mcp_tool_is_asked_for(project, home):
    write_mcp_json(project, {"repo": stdio_server()})
    home.mkdir(parents=True)
    (home / "settings.json").write_text(
        json.dumps(
            {
                "mcp_servers": {"mine": stdio_server()},
                "permissions": {"allow": ["mcp__mine__echo"], "deny": ["mcp__mine__env"]},
            }
        )
    )
    server = emulator(
        [
            {"tools": [{"name": "mcp__mine__echo", "input": {"text": "allowed"}}]},
            {"tools": [{"name": "mcp__mine__add", "input": {"a": 1, "b": 2}}]},
            {"tools": [{"name": "mcp__mine__env", "input": {"name": "HOME"}}]},
            {"text": "done"},
        ]
    )
    # Print mode's situation: permissions are checked, and nobody is there to ask.
    session = await session_on(server, project, home, trusted=False, skip_permissions=False)
    try:
        events = await run(session, "go")
        notices = [e.message.content for e in events if isinstance(e, SystemMessageEvent)]
        assert notices == []  # the trust question (or print mode's one warning line) names the held-back server
        bodies = main_bodies(server)
        assert not [n for n in tool_names(bodies[0]) if n.startswith("mcp__repo__")]
        assert last_result(bodies[1])["content"].startswith("echo: allowed")
        denied = last_result(bodies[2])
        assert denied["is_error"] and denied["content"].startswith("Permission to use mcp__mine__add was denied")
        assert last_result(bodies[3])["content"].startswith("Permission to use mcp__mine__env was denied")
        statuses = {s.name: (s.status, s.scope) for s in (await mcp_report(session)).servers}
        assert statuses == {"mine": ("connected", "user"), "repo": ("not started", "project")}
    finally:
        await close_session(session)
        server.stop()


async def test_a_server_gets_no_agent_credentials_in_its_environment_or_its_variables(project, home, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-the-agents-own-key")
    monkeypatch.setenv("MCP_TEST_VISIBLE", "visible")
    write_mcp_json(
        project,
        {
            "demo": stdio_server(),
            "greedy": {**stdio_server(), "env": {"STOLEN": "${ANTHROPIC_API_KEY}"}},
        },
    )
    server = emulator(
        [
            {"tools": [{"name": "mcp__demo__env", "input": {"name": "ANTHROPIC_API_KEY"}}]},
            {"tools": [{"name": "mcp__demo__env", "input": {"name": "MCP_TEST_VISIBLE"}}]},
            {"text": "done"},
        ]
    )
    session = await session_on(server, project, home)
    try:
        events = await run(session, "look")
        bodies = main_bodies(server)
        assert last_result(bodies[1])["content"].startswith("<unset>")
        assert last_result(bodies[2])["content"].startswith("visible")
        (greedy,) = [e.message.content for e in events if isinstance(e, SystemMessageEvent)]
        assert "refuses to pass the agent's own credential ${ANTHROPIC_API_KEY}" in greedy
        assert all("the-agents-own-key" not in json.dumps(b) for b in bodies)
        assert isinstance(events[-1], TurnEnded) and events[-1].reason == "completed"
    finally:
        await close_session(session)
        server.stop()


async def test_a_server_that_prints_to_stdout_still_works_and_nothing_reaches_the_terminal(project, home, capfd):
    write_mcp_json(project, {"noisy": stdio_server("--banner")})
    server = emulator([{"tools": [{"name": "mcp__noisy__echo", "input": {"text": "through"}}]}, {"text": "ok"}])
    session = await session_on(server, project, home)
    try:
        events = await run(session, "go")
        assert events[-1].reason == "completed"
        assert last_result(main_bodies(server)[1])["content"].startswith("echo: through")
    finally:
        await close_session(session)
        server.stop()
    assert capfd.readouterr().err == ""
    (log,) = (home / "projects").glob("*/*/mcp-logs/sdk.log")
    assert "Failed to parse JSONRPC message from server" in log.read_text()
