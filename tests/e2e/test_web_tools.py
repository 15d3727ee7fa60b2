"""WebSearch and WebFetch through the API's own server tools, end to end: the request declares
them, the emulator serves them from fixtures, the blocks are stored and sent back unchanged, and a
`pause_turn` is continued."""

from __future__ import annotations

import json
from pathlib import Path

from agent_repl.bootstrap import close_session, find_resume_source, open_session
from agent_repl.core.config.settings import Settings
from agent_repl.core.model.events import TurnEnded
from agent_repl.emulator.policies import CallablePolicy, Reply
from agent_repl.emulator.server import EmulatorServer
from agent_repl.emulator.server_tools import MAX_ITERATIONS
from agent_repl.offline.demo import DemoPolicy
from agent_repl.transcript.loader import load_session


def _server(policy) -> EmulatorServer:
    server = EmulatorServer(policy=policy)
    server.start()
    return server


def _last_assistant_blocks(body: dict) -> list[dict]:
    return [b for m in body["messages"] if m["role"] == "assistant" for b in m["content"]]


def _strip(value):
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


async def _session(server: EmulatorServer, project: Path, home: Path, **extra):
    settings = Settings(home=home, api_key="sk-ant-test-web", base_url=server.base_url, **extra)
    return await open_session(settings, project)


async def test_a_search_and_a_fetch_are_stored_and_sent_back_unchanged(project: Path, home: Path):
    calls = {"n": 0}

    def reply(request):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        last = request.body["messages"][-1]
        blocks = last["content"] if isinstance(last["content"], list) else []
        if last["role"] == "assistant" and blocks[-1].get("type") == "web_search_tool_result":
            url = blocks[-1]["content"][0]["url"]
            return Reply([{"type": "text", "text": "Reading the first hit."},
                          {"type": "server_tool_use", "id": "srvtoolu_01fetch", "name": "web_fetch", "input": {"url": url}}])
        if last["role"] == "assistant":
            return Reply([{"type": "text", "text": "difflib builds unified diffs."}])
        if "again" in json.dumps(last):
            return Reply([{"type": "text", "text": "Yes."}])
        return Reply([{"type": "text", "text": "Searching."},
                      {"type": "server_tool_use", "id": "srvtoolu_01search", "name": "web_search", "input": {"query": "difflib unified diff"}}])

    server = _server(CallablePolicy(reply))
    session = await _session(server, project, home)
    try:
        events = [e async for e in session.run_turn("how does difflib make diffs?")]
        assert events[-1].reason == "completed" and events[-1].final_text.endswith("difflib builds unified diffs.")
        stored = [b for m in session.messages if m.type == "assistant" for b in m.content]
        kinds = [b.type for b in stored]
        assert kinds == ["text", "server_tool_use", "web_search_tool_result", "text", "server_tool_use", "web_fetch_tool_result", "text"]
        await close_session(session)
        session = None
        loaded = load_session(next((home / "projects").glob("*/*.jsonl")))
        assert not loaded.warnings
        settings = Settings(home=home, api_key="sk-ant-test-web", base_url=server.base_url)
        source = find_resume_source(settings, project, loaded.session_id, latest=False)
        session = await open_session(settings, project, resume=source)
        [e async for e in session.run_turn("again?")]
        bodies = [e.body for e in server.recordings.messages if e.status == 200]
    finally:
        if session is not None:
            await close_session(session)
        server.stop()

    first = bodies[0]
    declared = [t for t in first["tools"] if t.get("type", "").startswith("web_")]
    assert [(t["type"], t["name"]) for t in declared] == [("web_fetch_20250910", "web_fetch"), ("web_search_20250305", "web_search")]
    search_result = next(b for b in _last_assistant_blocks(bodies[-1]) if b["type"] == "web_search_tool_result")
    assert search_result["tool_use_id"] == "srvtoolu_01search"
    hit = search_result["content"][0]
    assert hit["url"] == "https://docs.python.org/3/library/difflib.html" and hit["encrypted_content"]
    fetched = next(b for b in _last_assistant_blocks(bodies[-1]) if b["type"] == "web_fetch_tool_result")
    assert fetched["content"]["type"] == "web_fetch_result" and fetched["content"]["content"]["source"]["media_type"] == "text/plain"
    # What the resumed session sent back is what the live one received, block for block.
    sent = _strip([b for b in _last_assistant_blocks(bodies[-1]) if b["type"].startswith(("server_tool_use", "web_"))])
    assert sent == [b.model_dump(mode="json", exclude_none=True) for b in stored if b.type.startswith(("server_tool_use", "web_"))]


async def test_pause_turn_is_continued_with_the_paused_content(project: Path, home: Path):
    def reply(request):  # type: ignore[no-untyped-def]
        last = request.body["messages"][-1]
        blocks = last["content"] if isinstance(last["content"], list) else []
        searches = sum(b.get("type") == "server_tool_use" for b in blocks) if last["role"] == "assistant" else 0
        if searches >= MAX_ITERATIONS + 2:
            return Reply([{"type": "text", "text": "Enough searching."}])
        n = searches + 1
        return Reply([{"type": "server_tool_use", "id": f"srvtoolu_01n{n:02d}", "name": "web_search", "input": {"query": f"rebase {n}"}}])

    server = _server(CallablePolicy(reply))
    session = await _session(server, project, home)
    try:
        events = [e async for e in session.run_turn("search a lot")]
        bodies = [e.body for e in server.recordings.messages if e.status == 200]
    finally:
        await close_session(session)
        server.stop()
    ended = [e for e in events if isinstance(e, TurnEnded)][-1]
    assert ended.reason == "completed" and ended.final_text == "Enough searching."
    assert len(bodies) == 2, "the paused turn was sent back once and finished"
    continued = bodies[1]["messages"][-1]
    assert continued["role"] == "assistant"
    assert sum(b["type"] == "server_tool_use" for b in continued["content"]) == MAX_ITERATIONS


async def test_the_web_tools_can_be_turned_off_and_the_demo_uses_them(project: Path, home: Path):
    server = _server(DemoPolicy())
    session = await _session(server, project, home)
    try:
        events = [e async for e in session.run_turn("search the web for difflib")]
        assert "difflib — Helpers for computing deltas" in events[-1].final_text
    finally:
        await close_session(session)
    off = await _session(server, project, home, web_tools=False)
    try:
        events = [e async for e in off.run_turn("search the web for difflib")]
        assert "does not offer it" in events[-1].final_text
        bodies = [e.body for e in server.recordings.messages if e.status == 200]
    finally:
        await close_session(off)
        server.stop()
    assert not [t for t in bodies[-1]["tools"] if t["name"].startswith("web_")]


async def test_an_organization_without_web_tools_gets_one_notice_and_a_working_session(project: Path, home: Path):
    server = EmulatorServer(policy=DemoPolicy(), web_tools_enabled=False)
    server.start()
    session = await _session(server, project, home)
    try:
        first = [e async for e in session.run_turn("say hello")]
        second = [e async for e in session.run_turn("say hello again")]
    finally:
        await close_session(session)
        server.stop()
    for events in (first, second):
        assert [e.reason for e in events if isinstance(e, TurnEnded)] == ["completed"]
    notices = [e.message.content for e in first if e.kind == "system_message"]
    assert len(notices) == 1 and "is not enabled for this organization" in notices[0], notices
    assert "WebSearch and WebFetch are off for this session" in notices[0]
    assert not [e for e in second if e.kind == "system_message"]
    exchanges = server.recordings.messages
    # One refused request, then none that declares the web tools again.
    assert [e.status for e in exchanges] == [400, 200, 200]
    assert sorted(t["name"] for t in exchanges[0].body["tools"] if t["name"].startswith("web_")) == ["web_fetch", "web_search"]
    for exchange in exchanges[1:]:
        assert not [t for t in exchange.body["tools"] if t["name"].startswith("web_")]
    records = [r for r in load_session(session.sink.path).messages if r.type == "system"]
    assert any("is not enabled for this organization" in r.content for r in records)


def test_the_emulator_refuses_web_tools_for_such_an_organization():
    server = EmulatorServer(policy=DemoPolicy(), web_tools_enabled=False)
    server.start()
    try:
        import anthropic

        client = anthropic.Anthropic(api_key="k", base_url=server.base_url, max_retries=0)
        tools = [{"type": "web_search_20250305", "name": "web_search"}]
        try:
            client.messages.create(model="claude-sonnet-5-5", max_tokens=100, tools=tools,
                                   messages=[{"role": "user", "content": "hi"}])  # fmt: skip
        except anthropic.BadRequestError as exc:
            assert exc.body["error"]["type"] == "invalid_request_error"
            assert "web_search is not enabled for this organization" in exc.body["error"]["message"]
        else:
            raise AssertionError("the request declaring web_search was accepted")
        reply = client.messages.create(model="claude-sonnet-5-5", max_tokens=100, messages=[{"role": "user", "content": "hi"}])
        assert reply.content
    finally:
        server.stop()
