"""Our sub-agents' sidechain files load in claude-code-log as Claude Code's do, and in a resume."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from agent_repl.bootstrap import close_session, find_resume_source, open_session
from agent_repl.core.model.messages import UserMessage
from agent_repl.transcript.sidechain import subagent_histories
from agent_repl.ui.history_view import HistoryView, ToolItem

from .support import emulator, run, session_on, settings_for
from .test_task_e2e import two_tasks


def claude_code_log() -> str | None:
    beside = Path(sys.executable).with_name("claude-code-log")
    return str(beside) if beside.exists() else None


async def test_claude_code_log_loads_our_sub_agents_into_the_parent_session(project, home, tmp_path):
    exe = claude_code_log()
    if exe is None:
        pytest.skip("claude-code-log is not installed (it is in the dev extras: pip install -e '.[dev]')")
    main, agents = two_tasks(project)
    server = emulator(main, agents)
    session = await session_on(server, project, home)
    try:
        assert (await run(session, "Use two sub-agents."))[-1].reason == "completed"
    finally:
        await close_session(session)
        server.stop()
    transcript = Path(session.sink.path)  # type: ignore[attr-defined]
    out = tmp_path / "out.html"
    done = await asyncio.to_thread(
        subprocess.run,
        [exe, str(transcript), "-o", str(out)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "NO_COLOR": "1", "LANG": "C.UTF-8", "GIT_PYTHON_REFRESH": "quiet"},
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    for problem in ("validation error", "Unexpected error", "Traceback", "JSON decode error"):
        assert problem not in output, output
    loaded = sorted(line.split("Loading agent file ")[1].rstrip(".") for line in output.splitlines() if "Loading agent file" in line)
    assert len(loaded) == 2 and all(Path(p).parent == transcript.with_suffix("") / "subagents" for p in loaded)
    html = out.read_text(encoding="utf-8")
    # What only the sub-agents saw (their reads of util.py and README.md) is in the page, with their answers.
    assert "make configurable" in html and "A tiny project for tests." in html
    assert "TODOs: src/app.py line 2" in html


async def test_a_resumed_session_shows_each_task_with_its_sub_agent_work(project, home):
    main, agents = two_tasks(project)
    server = emulator(main, agents)
    settings = settings_for(server, project, home)
    session = await open_session(settings, project)
    try:
        await run(session, "Use two sub-agents.")
    finally:
        await close_session(session)
    source = find_resume_source(settings, project, session.session_id, latest=False)
    assert source is not None
    resumed = await open_session(settings, project, resume=source)
    try:
        # The parent's view is restored as it was: the Task results, none of the sub-agents' calls.
        results = [b for m in resumed.messages if isinstance(m, UserMessage) for b in m.tool_results()]
        assert len(results) == 2
        children = subagent_histories(Path(resumed.sink.path), resumed.messages)  # type: ignore[attr-defined]
        assert set(children) == {b.tool_use_id for b in results}
        view = HistoryView(children)
        view.extend(resumed.messages)
        tasks = [i for i in view.items if isinstance(i, ToolItem) and i.call.name == "Task"]
        steps = sorted([s.name for s in t.call.steps] for t in tasks)
        assert steps == [["Glob", "Read"], ["Grep", "Read", "Read"]]
        assert all(s.result is not None for t in tasks for s in t.call.steps)
    finally:
        await close_session(resumed)
        server.stop()
