"""Issue 5 acceptance: autocompact, the breaker, retries, reactive recovery, max output, undo.

These run our own nine-section summary (`api_compaction=False`); the API's on-demand
compaction, which Sonnet 5.5 offers, is covered in test_public_api.py."""

from __future__ import annotations

import json
from typing import Any

from agent_repl.bootstrap import close_session, open_session
from agent_repl.context.compact import kept_tail_budget, undo_last_compaction
from agent_repl.core.api.failures import CONTINUE_NUDGE
from agent_repl.core.loop.compact import compact_now
from agent_repl.core.model.events import CompactionFinished, ErrorEvent, TurnEnded
from agent_repl.core.model.messages import SystemMessage, UserMessage
from agent_repl.emulator.policies import CallablePolicy, Reply, ScriptPolicy
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer

from .compaction_support import (
    RICH_FILES,
    assert_resume_reproduces,
    is_summary_request,
    run,
    settings_for,
)
from .conftest import strip_cache_control

WINDOW = 60_000


def prompt(turn: int) -> str:
    return f"Turn {turn}: please look at {RICH_FILES[turn % len(RICH_FILES)].name} and note anything odd (#{turn * 7919})."


def reading_steps(turns: int) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for turn in range(turns):
        path = RICH_FILES[turn % len(RICH_FILES)]
        steps.append({"text": f"Reading {path.name}.", "tools": [{"name": "Read", "input": {"file_path": str(path)}}]})
        steps.append({"text": f"Read {path.name}; nothing odd."})
    return steps


async def test_two_hundred_requests_in_a_small_window_never_overflow_and_keep_every_user_message(tmp_path):
    turns = 100
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": reading_steps(turns)}), context_window=WINDOW,
        summarizer=AgentSummarizer(),
    )
    server.start()
    settings = settings_for(server, tmp_path, api_compaction=False, context_window=WINDOW)
    session = await open_session(settings, tmp_path)
    compactions = 0
    try:
        for turn in range(turns):
            events = await run(session, prompt(turn))
            assert not [e for e in events if isinstance(e, ErrorEvent)], [e for e in events if isinstance(e, ErrorEvent)]
            assert events[-1].reason == "completed"
            compactions += sum(isinstance(e, CompactionFinished) for e in events)
        exchanges = [e for e in server.recordings.messages if e.status == 200]
        main = [e for e in exchanges if request_kind(e.body) is None]
        summaries = [e for e in exchanges if is_summary_request(e.body)]
        memories = [e for e in exchanges if request_kind(e.body) == "memory"]
        assert len(main) == 2 * turns
        undone = session.projector.state.compaction.undone  # a memory compaction that did not fit is taken back
        boundaries = [
            m for m in session.messages
            if isinstance(m, SystemMessage) and m.subtype == "compact_boundary" and m.uuid not in undone
        ]
        from_memory = sum(bool(b.metadata.get("usedSessionMemory")) for b in boundaries)
        assert compactions >= 1 and len(boundaries) == compactions
        assert len(summaries) >= compactions - from_memory
        assert all(e.usage["cache_read_input_tokens"] > 0 for e in summaries + memories)
        assert all(e.status == 200 for e in server.recordings.messages)
        # A summary request is the last main request plus the question: it reads that request from
        # the cache and writes only the question (what came after it is kept verbatim instead),
        # unless what came after is more than the kept tail may hold.
        tail_budget = kept_tail_budget(session.projector.state)
        cut = 0
        for summary in summaries:
            before = [e for e in main if e.request_index < summary.request_index][-1]
            sent, asked = strip_cache_control(before.body["messages"]), strip_cache_control(summary.body["messages"])
            if asked[:-1] == sent[:-1] and asked[-1]["content"][:-1] == sent[-1]["content"]:
                cut += 1
                assert summary.usage["cache_creation_input_tokens"] < 1_000, summary.usage
            else:
                assert asked[: len(sent) - 1] == sent[:-1]
                assert summary.usage["cache_creation_input_tokens"] > tail_budget, summary.usage
        print(f"{cut} of {len(summaries)} summary requests were the last main request plus the question")
        final = json.dumps(main[-1].body["messages"])
        missing = [t for t in range(turns) if json.dumps(prompt(t))[1:-1] not in final]
        assert not missing, missing
        print(f"{compactions} compactions ({from_memory} from session memory), {len(summaries)} summary and "
              f"{len(memories)} memory requests, {len(main)} main requests")
        await assert_resume_reproduces(session, settings, tmp_path)
    finally:
        await close_session(session)
        server.stop()


def answering_side_requests(script: ScriptPolicy, answer: Any) -> CallablePolicy:
    """The script for main requests; `answer(request)` for summary and memory requests (None: the script's)."""

    def reply(request):  # type: ignore[no-untyped-def]
        if request_kind(request.body) in ("summary", "memory"):
            special = answer(request)
            if special is not None:
                return special
        return script.reply(request)

    policy = CallablePolicy(reply)
    policy.completed = script.completed  # type: ignore[method-assign]
    return policy


def failing_summaries(script: ScriptPolicy) -> CallablePolicy:
    return answering_side_requests(script, lambda request: Reply([{"type": "text", "text": "   "}], "end_turn"))


async def test_a_summarizer_that_always_fails_is_tried_three_times_then_never_with_one_message(tmp_path):
    turns = 12
    server = EmulatorServer(
        policy=failing_summaries(ScriptPolicy({"steps": reading_steps(turns)})), context_window=200_000,
        summarizer=AgentSummarizer(),
    )
    server.start()
    settings = settings_for(server, tmp_path, api_compaction=False, context_window=WINDOW)
    session = await open_session(settings, tmp_path)
    # No deletes from the cache, so the conversation grows to the compaction threshold quickly.
    session.projector.state.config.cached_trigger_share = 0
    notices = []
    try:
        for turn in range(turns):
            events = await run(session, prompt(turn))
            notices += [e for e in events if isinstance(e, ErrorEvent)]
            if session.compactor.disabled and len(notices) and events[-1].reason == "error":
                break
        summaries = [e for e in server.recordings.messages if e.body and is_summary_request(e.body)]
        assert len(summaries) == 3
        breaker = [e for e in notices if "failed 3 times" in e.message]
        assert len(breaker) == 1
        assert session.compactor.disabled
    finally:
        await close_session(session)
        server.stop()


async def test_prompt_too_long_inside_the_summary_request_drops_the_oldest_rounds_and_succeeds(tmp_path):
    server = EmulatorServer(policy=ScriptPolicy({"steps": reading_steps(6)}), summarizer=AgentSummarizer())
    server.start()
    settings = settings_for(server, tmp_path, api_compaction=False)
    session = await open_session(settings, tmp_path)
    try:
        for turn in range(6):
            await run(session, prompt(turn))
        if session.memory is not None:
            await session.memory.wait_for_extraction(timeout=30)
        server.faults.next("prompt_too_long")
        # With instructions, /compact always asks the model (session memory cannot follow them).
        assert await compact_now(session, "manual", "keep the file names").run_to_end() is True
        summaries = [e for e in server.recordings.messages if e.body and is_summary_request(e.body)]
        assert [e.status for e in summaries] == [400, 200]
        assert len(summaries[1].body["messages"]) < len(summaries[0].body["messages"])
        await assert_resume_reproduces(session, settings, tmp_path)
    finally:
        await close_session(session)
        server.stop()


async def test_reactive_compaction_recovers_once_and_a_second_error_in_the_turn_surfaces(tmp_path):
    server = EmulatorServer(policy=ScriptPolicy({"steps": reading_steps(8)}), summarizer=AgentSummarizer())
    server.start()
    settings = settings_for(server, tmp_path, api_compaction=False)
    session = await open_session(settings, tmp_path)
    try:
        for turn in range(4):
            await run(session, prompt(turn))
        start = server.state.request_count
        server.faults.at(start, "prompt_too_long")
        events = await run(session, prompt(4))
        assert events[-1].reason == "completed"
        assert not [e for e in events if isinstance(e, ErrorEvent)]
        assert any(isinstance(e, CompactionFinished) and e.trigger == "reactive" for e in events)
        assert any(isinstance(m, SystemMessage) and m.subtype == "compact_boundary" for m in session.messages)
        await assert_resume_reproduces(session, settings, tmp_path)

        session = await open_session(settings, tmp_path)
        start = server.state.request_count
        # The first request, then (after the summary request) its retry: both too long.
        server.faults.at(start, "prompt_too_long")
        server.faults.at(start + 2, "prompt_too_long")
        events = await run(session, prompt(5))
        assert events[-1].reason == "error"
        errors = [e for e in events if isinstance(e, ErrorEvent)]
        assert len(errors) == 1 and "prompt is too long" in errors[0].message
    finally:
        await close_session(session)
        server.stop()


async def test_max_output_escalates_once_then_nudges_three_times_then_stops(tmp_path):
    cut = {"text": "A very long answer that gets cut", "stop_reason": "max_tokens"}
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": [cut] * 5 + [{"text": "never reached"}]}), summarizer=AgentSummarizer()
    )
    server.start()
    settings = settings_for(server, tmp_path, api_compaction=False)
    session = await open_session(settings, tmp_path)
    try:
        events = await run(session, "write the whole thing")
        bodies = [e.body for e in server.recordings.messages if e.status == 200]
        assert [b["max_tokens"] for b in bodies] == [32000, 64000, 64000, 64000, 64000]
        nudges = [m for m in session.messages if isinstance(m, UserMessage) and m.content == CONTINUE_NUDGE]
        assert len(nudges) == 3 and all(n.is_meta for n in nudges)
        assert isinstance(events[-1], TurnEnded) and events[-1].reason == "error"
        await assert_resume_reproduces(session, settings, tmp_path)
    finally:
        await close_session(session)
        server.stop()


async def test_compact_then_undo_returns_the_exact_pre_compaction_view(tmp_path):
    server = EmulatorServer(policy=ScriptPolicy({"steps": reading_steps(4)}), summarizer=AgentSummarizer())
    server.start()
    settings = settings_for(server, tmp_path, api_compaction=False)
    session = await open_session(settings, tmp_path)
    try:
        for turn in range(4):
            await run(session, prompt(turn))
        before = json.dumps(session.projector.project(session.messages, dry_run=True).wire)
        assert await compact_now(session, "manual", "focus on the files").run_to_end() is True
        compacted = json.dumps(session.projector.project(session.messages, dry_run=True).wire)
        assert compacted != before and "focus on the files" in json.dumps(server.recordings.messages[-1].body)
        # The summary request is the last main request plus the question, so it writes only the
        # question; the turn's final reply, which that request did not send, is kept verbatim.
        *_, last_main, summary = [e for e in server.recordings.messages if e.status == 200]
        sent, asked = strip_cache_control(last_main.body["messages"]), strip_cache_control(summary.body["messages"])
        assert is_summary_request(summary.body) and asked[:-1] == sent[:-1]
        assert asked[-1]["content"][:-1] == sent[-1]["content"]
        assert summary.usage["cache_creation_input_tokens"] < 1_000, summary.usage
        assert f"Read {RICH_FILES[3].name}; nothing odd." in compacted
        ok, message = await undo_last_compaction(session, session.projector)
        assert ok, message
        assert json.dumps(session.projector.project(session.messages, dry_run=True).wire) == before
        ok, message = await undo_last_compaction(session, session.projector)
        assert not ok and "no compaction" in message
        await assert_resume_reproduces(session, settings, tmp_path)
    finally:
        await close_session(session)
        server.stop()


async def test_the_same_two_hundred_requests_complete_with_collapse_commits_and_an_untouched_history(tmp_path):
    turns = 100
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": reading_steps(turns)}), context_window=WINDOW,
        summarizer=AgentSummarizer(),
    )
    server.start()
    settings = settings_for(server, tmp_path, api_compaction=False, context_window=WINDOW, context_strategy="collapse")
    session = await open_session(settings, tmp_path)
    try:
        for turn in range(turns):
            events = await run(session, prompt(turn))
            assert not [e for e in events if isinstance(e, ErrorEvent)]
            assert events[-1].reason == "completed"
            assert not [e for e in events if isinstance(e, CompactionFinished)]
        main = [e for e in server.recordings.messages if e.status == 200 and request_kind(e.body) is None]
        assert len(main) == 2 * turns
        assert all(e.status == 200 for e in server.recordings.messages)
        assert not [m for m in session.messages if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"]
        commits = session.projector.state.collapse.commits
        assert len(commits) >= 1
        # The history holds every prompt and every tool result, untouched.
        prompts = [m.content for m in session.messages if isinstance(m, UserMessage) and isinstance(m.content, str)]
        assert all(prompt(t) in prompts for t in range(turns))
        final = json.dumps(main[-1].body["messages"])
        assert not [t for t in range(turns) if json.dumps(prompt(t))[1:-1] not in final]
        print(f"{len(commits)} collapse commits over {turns} turns; final request {main[-1].usage}")
        await assert_resume_reproduces(session, settings, tmp_path)
    finally:
        await close_session(session)
        server.stop()


async def test_a_summary_cut_off_at_the_window_edge_is_asked_again_with_room_and_never_installed(tmp_path):
    # Found by the replay benchmark: a summary stopped by model_context_window_exceeded was used as
    # it stood, and the user messages it had not reached yet were forgotten.
    summaries: list[int] = []

    def answer(request):  # type: ignore[no-untyped-def]
        if request_kind(request.body) != "summary":
            return None
        summaries.append(len(request.body["messages"]))
        if len(summaries) > 1:
            return None
        return Reply(
            [{"type": "text", "text": "<analysis>half</analysis>\n<summary>\n1. Primary Re"}], "model_context_window_exceeded"
        )

    policy = answering_side_requests(ScriptPolicy({"steps": reading_steps(4)}), answer)
    server = EmulatorServer(policy=policy, summarizer=AgentSummarizer())
    server.start()
    settings = settings_for(server, tmp_path, api_compaction=False)
    session = await open_session(settings, tmp_path)
    try:
        for turn in range(4):
            await run(session, prompt(turn))
        assert await compact_now(session, "manual", "focus on the files").run_to_end() is True
        assert len(summaries) == 2 and summaries[1] < summaries[0]  # the oldest rounds made room
        [summary] = [m for m in session.messages if isinstance(m, UserMessage) and m.is_compact_summary]
        assert "9. Optional Next Step" in summary.text()  # the complete one, not the cut-off one
        assert all(prompt(t) in summary.text() for t in range(4))  # what the user typed, all of it
    finally:
        await close_session(session)
        server.stop()
