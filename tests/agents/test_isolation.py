"""The isolation rules for sub-agents (docs/architecture.md 7.3), through the real loop on the emulator.

Cached microcompact is the main thread's alone: a sub-agent's tool results never enter the main
thread's registry (its deleted and pinned results, the `cache_reference`s it sends). A sub-agent's
compaction changes only its own pipeline state: the parent's is the same before and after it.
"""

from __future__ import annotations

import copy
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import rich

from agent_repl.bootstrap import close_session
from agent_repl.core.model.events import CompactionFinished
from agent_repl.session import Session

from .support import bodies, emulator, read_jsonl, run, session_on, wire_tool_ids

WINDOW = 60_000
# Real source files of a dependency: large enough that a dozen fill a small window.
BIG_FILES = sorted(Path(rich.__file__).parent.glob("*.py"), key=lambda p: (-p.stat().st_size, p.name))[:12]


def parent_state(session: Session) -> dict[str, Any]:
    """Everything of the parent's pipeline and compaction that a compaction could reset."""
    state = session.projector.state  # type: ignore[attr-defined]
    compactor = session.compactor  # type: ignore[union-attr]
    return copy.deepcopy({
        "budget": asdict(state.budget),
        "snip": asdict(state.snip),
        "microcompact": asdict(state.microcompact),
        "tokens": asdict(state.tokens),
        "compaction": asdict(state.compaction),
        "collapse": [asdict(c) for c in state.collapse.commits],
        "rewound": set(state.rewound),
        "config": {k: v for k, v in vars(state.config).items() if not callable(v)},
        "breaker": (compactor.consecutive_failures, compactor.disabled),
        "history": [m.uuid for m in session.messages],
        "files": dict(session.files.seen),
        "loaded_tools": session.loaded_tools,
    })


def cache_references(body: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if "cache_reference" in block:
                found.add(block["cache_reference"])
            for edit in block.get("edits", []) if block.get("type") == "cache_edits" else []:
                found.add(edit["cache_reference"])
    return found


async def test_sub_agent_results_stay_out_of_the_main_registry_and_its_compaction_leaves_the_parent_alone(project, home):
    small = [project / "README.md", project / "src" / "app.py", project / "src" / "util.py", project / "README.md"]
    main = [
        *({"tools": [{"name": "Read", "input": {"file_path": str(path)}}]} for path in small),
        {"text": "Read them."},
        {"tools": [{"name": "Task", "input": {"description": "Survey rich", "prompt": "AGENT-C: survey these files"}}]},
        {"text": "The survey is back."},
    ]
    child = [{"tools": [{"name": "Read", "input": {"file_path": str(path)}}]} for path in BIG_FILES]
    server = emulator(main, [{"prompt": "AGENT-C", "steps": [*child, {"text": "Surveyed every file."}]}], cache_editing=True)
    session = await session_on(server, project, home, context_window=WINDOW, api_compaction=False)
    config = session.projector.state.config  # type: ignore[attr-defined]
    # Delete from the cache after a few results, so the main registry is in use before the Task.
    config.cached_trigger, config.cached_keep = 2, 1
    runner = session.tool_ports.subagents
    assert runner is not None
    snapshots: list[dict[str, Any]] = []
    run_task = runner.run_task

    async def observed(args, ctx):  # type: ignore[no-untyped-def]
        snapshots.append(parent_state(session))
        output = await run_task(args, ctx)
        snapshots.append(parent_state(session))
        return output

    runner.run_task = observed
    try:
        first = await run(session, "read the small files")
        assert first[-1].reason == "completed"
        mc = session.projector.state.microcompact  # type: ignore[attr-defined]
        assert mc.deleted and mc.pinned, "the main thread's cached microcompact should be in use"
        events = await run(session, "now survey the rich files with a sub-agent")
        assert events[-1].reason == "completed"
        assert not any(isinstance(e, CompactionFinished) for e in events)  # the parent never compacted

        # The sub-agent compacted its own conversation (its boundary is in its sidechain file).
        subagents = Path(session.sink.path).with_suffix("") / "subagents"  # type: ignore[attr-defined]
        (sidechain,) = subagents.glob("agent-*.jsonl")
        side = read_jsonl(sidechain)
        assert any(r.get("subtype") == "compact_boundary" for r in side)
        # ... and its compaction and everything else it did left the parent's state as it was.
        before, after = snapshots
        assert after == before

        # Nothing of the sub-agent is in the main registry or in the main thread's cache edits.
        child_bodies = bodies(server, "AGENT-C")
        child_ids = set().union(*(wire_tool_ids(b) for b in child_bodies))
        assert len(child_ids) == len(BIG_FILES)  # one id for a call and its result
        registry = mc.deleted | {tid for edit in mc.pinned for tid in edit.tool_use_ids}
        assert registry and not registry & child_ids
        main_bodies = bodies(server)
        sent = set().union(*(cache_references(b) for b in main_bodies))
        assert sent and not sent & child_ids
        # The sub-agent sends no cache editing at all: it is not the main thread.
        assert not any(cache_references(b) for b in child_bodies)
        assert not any("cache_edits" in json.dumps(b) for b in child_bodies)
        # The parent's last request holds the Task's answer and none of the sub-agent's reads.
        assert not wire_tool_ids(main_bodies[-1]) & child_ids
        assert "Surveyed every file." in json.dumps(main_bodies[-1]["messages"][-1])
    finally:
        await close_session(session)
        server.stop()
