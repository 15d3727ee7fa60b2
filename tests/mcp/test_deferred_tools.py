"""Sixty MCP tools: deferred behind ToolSearch, and a found tool still sent after a compaction.

Through the real loop against the emulator, which follows the public API's tool search: tools
with `defer_loading` stay out of the prompt, a `tool_reference` in a tool result loads one.
"""

from __future__ import annotations

import json

import anthropic

from agent_repl.bootstrap import close_session, find_resume_source, open_session
from agent_repl.core.api.deferred_tools import DISCOVERED_KEY
from agent_repl.core.loop.compact import compact_now
from agent_repl.core.model.events import ToolResultEvent
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer

from .conftest import stdio_server, write_mcp_json
from .support import last_result, records, run, settings_for, tool_results, without_cache_control

WINDOW = 40_000
SHARE = 0.10
FOUND = "mcp__ledger__record_07"


def main_requests(server: EmulatorServer) -> list[dict]:
    """The turns' own requests (not summary, memory or on-demand compaction requests)."""
    return [
        e.body
        for e in server.recordings.messages
        if e.status == 200 and request_kind(e.body) is None and "compaction" not in e.body
    ]


def tool_list_tokens(server: EmulatorServer, body: dict, tools: list[dict]) -> int:
    """What the tool list adds to a request, as the emulator's count_tokens endpoint counts it."""
    client = anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0)
    common = {"model": body["model"], "system": body["system"], "messages": [{"role": "user", "content": "hi"}]}
    try:
        return client.messages.count_tokens(**common, tools=tools).input_tokens - client.messages.count_tokens(
            **common
        ).input_tokens
    finally:
        client.close()


def next_request(session) -> str:
    projection = session.projector.project(session.messages, dry_run=True)
    return json.dumps({"tools": session.definitions_for(projection.loaded_tools), "messages": projection.wire})


async def test_sixty_tools_are_deferred_and_a_tool_found_by_tool_search_is_still_sent_after_a_compaction(project, home):
    write_mcp_json(project, {"ledger": stdio_server("--many", "60")})
    steps = [
        {"text": "Loading the ledger tool.", "tools": [{"name": "ToolSearch", "input": {"query": "ledger record 7"}}]},
        {"tools": [{"name": FOUND, "input": {"fields": "owner"}}]},
        {"text": "Record 7 is fine."},
        {"thinking": "Record 7 again, for its status.", "tools": [{"name": FOUND, "input": {"fields": "status"}}]},
        {"text": "Still fine."},
    ]
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": steps}), context_window=WINDOW, summarizer=AgentSummarizer()
    )
    server.start()
    # Without the API's web server tools, which would come last in the list: this is about deferral.
    settings = settings_for(server, project, home, context_window=WINDOW, web_tools=False)
    session = await open_session(settings, project)
    try:
        events = await run(session, "check ledger record 7")
        assert events[-1].reason == "completed"
        assert [(e.name, e.is_error) for e in events if isinstance(e, ToolResultEvent)] == [
            ("ToolSearch", False),
            (FOUND, False),
        ]
        first, after_search, after_call = main_requests(server)

        # Every MCP tool goes out deferred; the built-in tools and ToolSearch are loaded.
        mcp_tools = [t for t in first["tools"] if t["name"].startswith("mcp__")]
        assert len(mcp_tools) == 68 and all(t["defer_loading"] is True for t in mcp_tools)
        loaded = [t for t in first["tools"] if not t.get("defer_loading")]
        assert [t["name"] for t in loaded] == sorted(n for n in session.tools if not n.startswith("mcp__"))
        assert {"Read", "Bash", "ToolSearch"} <= {t["name"] for t in loaded}
        # The breakpoint sits on the last tool the model reads, not on a deferred one.
        assert [t["name"] for t in first["tools"] if "cache_control" in t] == [loaded[-1]["name"]]
        search = next(t for t in first["tools"] if t["name"] == "ToolSearch")
        assert "mcp__ledger__record_59" in search["description"] and "mcp__ledger__echo" in search["description"]

        # What the MCP servers add to the tool list (ToolSearch with the names) stays under its share
        # of the window; their definitions sent loaded would not.
        deferred_tokens = tool_list_tokens(server, first, first["tools"])
        assert deferred_tokens == tool_list_tokens(server, first, without_cache_control(loaded))
        builtin = [t for t in without_cache_control(loaded) if t["name"] != "ToolSearch"]
        builtin_tokens = tool_list_tokens(server, first, builtin)
        undeferred = [{k: v for k, v in t.items() if k != "defer_loading"} for t in without_cache_control(first["tools"])]
        undeferred_tokens = tool_list_tokens(server, first, undeferred)
        assert deferred_tokens - builtin_tokens < SHARE * WINDOW < undeferred_tokens - builtin_tokens

        # ToolSearch answers with a tool_reference, and the tool list never changes meanwhile.
        reference = last_result(after_search)["content"]
        assert reference[0] == {"type": "tool_reference", "tool_name": FOUND}
        assert {b["type"] for b in reference} == {"tool_reference"} and 1 < len(reference) <= 5
        found_by_search = sorted(b["tool_name"] for b in reference)
        assert json.dumps(after_search["tools"]) == json.dumps(first["tools"])
        assert json.dumps(after_call["tools"]) == json.dumps(first["tools"])
        assert last_result(after_call)["content"].startswith("record 7: status ok (fields=owner")

        # A compaction summarizes the reference away; the boundary remembers the tool.
        assert await compact_now(session, "manual").run_to_end() is True
        (boundary,) = [r for r in records(session) if r.get("subtype") == "compact_boundary"]
        assert boundary["compactMetadata"][DISCOVERED_KEY] == found_by_search

        events = await run(session, "and once more")
        assert events[-1].reason == "completed" and events[-1].final_text == "Still fine."
        compacted, final = main_requests(server)[3:]
        assert not any(
            isinstance(r.get("content"), list) and any(b.get("type") == "tool_reference" for b in r["content"])
            for r in tool_results(compacted)
        )
        assert [t["name"] for t in compacted["tools"] if t["name"].startswith("mcp__") and not t.get("defer_loading")] == (
            found_by_search
        )
        # The only change to the list: the found tools are sent loaded (and the breakpoint moved to the last).
        assert without_cache_control(compacted["tools"]) == [
            {k: v for k, v in t.items() if not (t["name"] in found_by_search and k == "defer_loading")}
            for t in without_cache_control(first["tools"])
        ]
        assert [t["name"] for t in compacted["tools"] if "cache_control" in t] == [found_by_search[-1]]
        assert last_result(final)["content"].startswith("record 7: status ok (fields=status")
        # The thinking of the reply after the compaction goes back as it came: its prefix holds.
        sent = [b for m in final["messages"] if m["role"] == "assistant" for b in m["content"] if b["type"] == "thinking"]
        stored = [
            b for r in records(session) if r.get("type") == "assistant" for b in r["message"]["content"] if b["type"] == "thinking"
        ]
        assert len(sent) == 1 and sent[0]["signature"] and sent == stored[-1:]
        assert json.dumps(final["tools"]) == json.dumps(compacted["tools"])

        # A resumed session sends the same next request, the found tool still loaded.
        expected = next_request(session)
        await close_session(session)
        source = find_resume_source(settings, project, session.session_id, latest=False)
        session = await open_session(settings, project, resume=source)
        assert next_request(session) == expected
    finally:
        await close_session(session)
        server.stop()
