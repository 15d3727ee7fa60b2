"""Issue 5, collapse strategy: a long session with real tool output in a 60K window, in process.

The context never overflows: old rounds are collapsed into `<collapsed>` summaries (committed as
transcript records) instead of compacted, the history keeps every entry, and every message the
user typed still reaches the model verbatim, in a summary or as itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import rich

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.config.settings import load_settings
from agent_repl.core.model.events import ErrorEvent, TurnEnded
from agent_repl.core.model.messages import AssistantMessage, SystemMessage, UserMessage
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer

from .compaction_support import assert_resume_reproduces
from .conftest import read_records, transcript_files

# Sized for the default model's tokenizer (the newer one, about 1.3x the older count for the same text).
WINDOW = 78_000
RICH = Path(rich.__file__).parent
FILES = sorted((p for p in RICH.glob("*.py") if 6_000 < p.stat().st_size < 40_000), key=lambda p: p.name)


def prompt(turn: int) -> str:
    return f"Turn {turn}: what does {FILES[turn % len(FILES)].name} do? Keep note #{turn * 7919}."


def tool_for(turn: int, path: Path) -> dict[str, Any]:
    kind = turn % 3
    if kind == 0:
        return {"name": "Read", "input": {"file_path": str(path), "limit": 200}}
    if kind == 1:
        return {
            "name": "Grep",
            "input": {"pattern": "def ", "path": str(path), "output_mode": "content", "-n": True},
        }
    return {"name": "Bash", "input": {"command": f"wc -l {path} && head -c 6000 {path}"}}


def steps(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for turn in range(turns):
        path = FILES[turn % len(FILES)]
        musing = f"I will look at {path.name} to see how its classes fit together. " * 30
        out.append({"text": musing, "tools": [tool_for(turn, path)]})
        out.append(
            {"text": f"{path.name} defines the pieces it is named after; nothing unusual stands out. " * 25}
        )
    return out


def wire_text(body: dict[str, Any]) -> str:
    texts = []
    for message in body["messages"]:
        for block in message["content"]:
            if block.get("type") == "text":
                texts.append(block["text"])
    return "\n".join(texts)


async def test_a_long_session_in_a_small_window_collapses_instead_of_overflowing(tmp_path):
    turns = 40
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps(turns)}), context_window=WINDOW)
    server.start()
    env = {
        "AGENT_REPL_HOME": str(tmp_path / "home"),
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "k",
    }
    settings = load_settings(
        cwd=tmp_path,
        env=env,
        overrides={"skip_permissions": True, "context_window": WINDOW, "context_strategy": "collapse"},
    )
    session = await open_session(settings, tmp_path)
    try:
        assert session.projector.state.config.strategy == "collapse"
        for turn in range(turns):
            events = [e async for e in session.run_turn(prompt(turn))]
            errors = [e for e in events if isinstance(e, ErrorEvent)]
            assert not errors, (turn, errors)
            ended = [e for e in events if isinstance(e, TurnEnded)]
            assert ended[-1].reason == "completed", (turn, ended)

        exchanges = server.recordings.messages
        assert all(e.status == 200 for e in exchanges), [e.status for e in exchanges]
        main = [e.body for e in exchanges if request_kind(e.body) is None]
        assert len(main) == 2 * turns
        assert not [e for e in exchanges if request_kind(e.body) == "summary"], "a compaction ran"

        # Collapse commits happened and are in the transcript; no compaction boundary.
        [transcript] = transcript_files(tmp_path / "home")
        records = read_records(transcript)
        commits = [r for r in records if r["type"] == "collapse-commit"]
        assert len(commits) >= 3, commits
        assert not any(
            isinstance(m, SystemMessage) and m.subtype == "compact_boundary" for m in session.messages
        )

        # The history is untouched: every prompt, reply and tool result is still there.
        history = session.messages
        prompts = [
            m.text()
            for m in history
            if isinstance(m, UserMessage) and not m.is_meta and not m.is_tool_result()
        ]
        assert prompts == [prompt(t) for t in range(turns)]
        results = [b for m in history if isinstance(m, UserMessage) for b in m.tool_results()]
        calls = [b for m in history if isinstance(m, AssistantMessage) for b in m.tool_uses()]
        assert len(results) == len(calls) == turns
        uuids = {m.uuid for m in history}
        assert all(c["startUuid"] in uuids and c["endUuid"] in uuids for c in commits)
        assert len([r for r in records if r["type"] in ("user", "assistant", "system")]) == len(history)

        # Every typed message reaches the model verbatim, collapsed or not.
        final = wire_text(main[-1])
        assert "<collapsed>" in final
        missing = [t for t in range(turns) if prompt(t) not in final]
        assert not missing, missing
        # No request came near the window.
        sizes = [
            sum(
                e.usage[k] for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
            )
            for e in exchanges
        ]
        assert max(sizes) < WINDOW

        await assert_resume_reproduces(session, settings, tmp_path)
    finally:
        await close_session(session)
        server.stop()


async def test_prompt_too_long_is_recovered_by_draining_collapses_first(tmp_path):
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps(6)}))
    server.start()
    env = {"AGENT_REPL_HOME": str(tmp_path / "home"), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "k"}
    settings = load_settings(
        cwd=tmp_path, env=env, overrides={"skip_permissions": True, "context_strategy": "collapse"}
    )
    session = await open_session(settings, tmp_path)
    try:
        for turn in range(5):
            await _completed(session, turn)
        state = session.projector.state
        assert not state.collapse.commits and not state.collapse.staged  # far below every threshold
        failing = server.state.request_count
        server.faults.at(failing, "prompt_too_long")
        await _completed(session, 5)
        retried = server.recordings.messages[failing + 1]
        assert server.recordings.messages[failing].status == 400 and retried.status == 200
        text = wire_text(retried.body)
        assert "<collapsed>" in text and all(prompt(t) in text for t in range(6))
        # Everything older than the current turn was collapsed; no compaction ran.
        assert state.collapse.commits
        assert not any(isinstance(m, SystemMessage) and m.subtype == "compact_boundary" for m in session.messages)
        [transcript] = transcript_files(tmp_path / "home")
        assert any(r["type"] == "collapse-commit" for r in read_records(transcript))
        await assert_resume_reproduces(session, settings, tmp_path)
    finally:
        await close_session(session)
        server.stop()


async def _completed(session: Any, turn: int) -> None:
    events = [e async for e in session.run_turn(prompt(turn))]
    assert not [e for e in events if isinstance(e, ErrorEvent)], (turn, events)
    assert events[-1].reason == "completed"
