"""Session memory against the emulator, in process: turns with real tool output grow the
conversation past the first threshold, the extraction runs as its own request after the turn
(held back in the emulator while the test looks), reads the cached prefix, writes the memory file
and the transcript record, and a resume restores it."""

from __future__ import annotations

import asyncio
import json
import stat
import threading
from pathlib import Path
from typing import Any

import rich

from agent_repl.bootstrap import close_session, find_resume_source, open_session
from agent_repl.core.config.settings import load_settings
from agent_repl.core.model.events import CompactionFinished, TurnEnded
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.base import PolicyRequest, Reply
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer
from agent_repl.transcript.paths import SessionPaths

RICH = Path(rich.__file__).parent
FILES = sorted((p for p in RICH.glob("*.py") if 8_000 < p.stat().st_size < 16_000), key=lambda p: p.name)[:6]


class HeldMemoryRequests:
    """The script policy, except that a memory request waits in the emulator until released."""

    def __init__(self, script: ScriptPolicy) -> None:
        self.script = script
        self.arrived = threading.Event()
        self.release = threading.Event()

    def reply(self, request: PolicyRequest) -> Reply:
        if request_kind(request.body) == "memory":
            self.arrived.set()
            self.release.wait(30)
        return self.script.reply(request)

    def completed(self, request: PolicyRequest, reply: Reply) -> None:
        self.script.completed(request, reply)


def steps() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in FILES:
        out.append({"text": f"Reading {path.name}.", "tools": [{"name": "Read", "input": {"file_path": str(path)}}]})
        out.append({"text": f"Done with {path.name}."})
    return out


def without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value


async def test_memory_is_extracted_in_the_background_from_the_cached_prefix_and_restored_on_resume(tmp_path):
    assert len(FILES) == 6
    policy = HeldMemoryRequests(ScriptPolicy({"steps": steps()}))
    server = EmulatorServer(policy=policy, summarizer=AgentSummarizer())
    server.start()
    project = tmp_path / "project"
    project.mkdir()
    env = {"AGENT_REPL_HOME": str(tmp_path / "home"), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "k"}
    # A small window, so the conversation nears compaction within a few turns.
    settings = load_settings(cwd=project, env=env, overrides={"skip_permissions": True, "context_window": 32_000})
    session = await open_session(settings, project)
    memory = session.memory
    prompts: list[str] = []
    try:
        for turn in range(len(FILES) - 1):
            prompts.append(f"Please read {FILES[turn].name} (turn {turn}).")
            events = [e async for e in session.run_turn(prompts[-1])]
            assert isinstance(events[-1], TurnEnded) and events[-1].reason == "completed"
            if memory.extracting:
                break
            assert not policy.arrived.is_set()
        else:
            raise AssertionError("the conversation never grew past the first threshold")
        assert len(prompts) >= 2, "one turn was already enough; use smaller files"
        covered = session.messages[-1].uuid
        tokens = session.projector.project(session.messages, dry_run=True).estimated_tokens
        assert tokens >= memory.first_after_tokens

        # The turn has ended while its extraction is still waiting in the emulator.
        assert await asyncio.to_thread(policy.arrived.wait, 30)
        assert memory.extracting and memory.content is None and not memory.path.exists()
        policy.release.set()
        assert await memory.wait_for_extraction(timeout=30)
        assert memory.last_error is None, memory.last_error

        # A separate request after the turn's own, reading the prefix the turn's last request cached.
        exchanges = [e for e in server.recordings.messages if e.status == 200]
        [extraction] = [e for e in exchanges if request_kind(e.body) == "memory"]
        turn_requests = [e for e in exchanges if request_kind(e.body) is None]
        assert extraction.seq > turn_requests[-1].seq
        before = without_cache_control(turn_requests[-1].body["messages"])
        assert without_cache_control(extraction.body["messages"])[: len(before)] == before
        assert extraction.usage["cache_read_input_tokens"] > 0

        # The emulator's notes quote every prompt; file and record hold the same notes.
        content = memory.content
        assert content and all(p in content for p in prompts)
        assert "<analysis>" not in content and "<summary>" not in content
        paths = SessionPaths(home=settings.home, cwd=project.resolve(), session_id=session.session_id)
        assert memory.path == paths.session_dir / "memory.md"
        assert memory.path.read_text() == content + "\n"
        assert stat.S_IMODE(memory.path.stat().st_mode) == 0o600
        records = [json.loads(line) for line in paths.transcript.read_text().splitlines()]
        [record] = [r for r in records if r["type"] == "session-memory"]
        assert record["content"] == content and record["lastSummarizedUuid"] == covered
        assert record["tokensAtExtraction"] == memory.tokens_at_extraction == tokens

        # The memory request used no script step: the next turn gets the next one.
        events = [e async for e in session.run_turn("And the next file?")]
        assert events[-1].final_text == f"Done with {FILES[len(prompts)].name}."
    finally:
        policy.release.set()
        await close_session(session)

    memory.path.unlink()
    source = find_resume_source(settings, project, session.session_id, latest=False)
    assert source is not None
    resumed = await open_session(settings, project, resume=source)
    try:
        restored = resumed.memory
        assert (restored.content, restored.last_summarized_uuid) == (content, covered)
        assert restored.tokens_at_extraction == tokens
        assert restored.path.read_text() == content + "\n"
        assert restored.maybe_start in resumed.after_turn_hooks
    finally:
        await close_session(resumed)

    # A transcript resumed from elsewhere is forked into a new session, which keeps the notes too.
    copy = tmp_path / "elsewhere.jsonl"
    copy.write_bytes(paths.transcript.read_bytes())
    source = find_resume_source(settings, project, str(copy), latest=False)
    assert source is not None and not source.owned
    forked = await open_session(settings, project, resume=source)
    try:
        assert forked.session_id != session.session_id and forked.memory.content == content
        assert forked.memory.path.read_text() == content + "\n"
    finally:
        await close_session(forked)
        server.stop()
    fork_paths = SessionPaths(home=settings.home, cwd=project.resolve(), session_id=forked.session_id)
    fork_records = [json.loads(line) for line in fork_paths.transcript.read_text().splitlines()]
    [copied] = [r for r in fork_records if r["type"] == "session-memory"]
    assert copied["content"] == content and copied["lastSummarizedUuid"] == covered


async def test_a_compaction_with_fresh_notes_makes_no_summary_request(tmp_path):
    files = sorted((p for p in RICH.glob("*.py") if 8_000 < p.stat().st_size < 16_000), key=lambda p: p.name)
    script = ScriptPolicy(
        {
            "steps": [
                step
                for path in files
                for step in (
                    {
                        "text": f"Reading {path.name}.",
                        "tools": [{"name": "Read", "input": {"file_path": str(path)}}],
                    },
                    {"text": f"Done with {path.name}."},
                )
            ]
        }
    )
    server = EmulatorServer(policy=script, summarizer=AgentSummarizer())
    server.start()
    project = tmp_path / "project"
    project.mkdir()
    env = {
        "AGENT_REPL_HOME": str(tmp_path / "home"),
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "k",
    }
    settings = load_settings(
        cwd=project, env=env, overrides={"skip_permissions": True, "context_window": 32_000}
    )
    session = await open_session(settings, project)
    memory = session.memory
    # The API's own summary is on offer too: the notes must still come first.
    assert session.projector.state.config.on_demand_compaction
    compacted = False
    try:
        for turn, path in enumerate(files):
            events = [e async for e in session.run_turn(f"Please read {path.name} (turn {turn}).")]
            assert isinstance(events[-1], TurnEnded) and events[-1].reason == "completed"
            assert await memory.wait_for_extraction(timeout=30)
            if any(isinstance(e, CompactionFinished) for e in events):
                compacted = True
                break
    finally:
        await close_session(session)
    assert compacted, "the conversation never reached the compaction point"
    kinds = [
        request_kind(e.body) or ("compaction" if "compaction" in e.body else "main")
        for e in server.recordings.messages
    ]
    assert kinds.count("memory") == 1, kinds
    assert "summary" not in kinds and "compaction" not in kinds, kinds
    assert memory.last_error is None
