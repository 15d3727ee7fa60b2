"""Every file of the session store is 0600 and every folder 0700, whatever the umask.

One session, under the usual umask (0022), writes every kind of file the store holds: the
transcript, a sub-agent's sidechain and its `.meta.json`, outputs too large for the context
(the main thread's and the sub-agent's), the session notes, a compaction, file checkpoints;
then a fork of it (resumed from a copy elsewhere) copies its outputs, compaction records and
sub-agents' files into a session of its own. Every file and folder under the agent's home is
then checked.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from agent_repl.bootstrap import close_session, find_resume_source, open_session
from agent_repl.core.config.settings import load_settings
from agent_repl.core.loop.compact import compact_now
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer

from .support import files_under

SUBAGENT_PROMPT = "Count to thirty thousand for the record."


def _steps(project: Path) -> dict:
    return {
        "steps": [
            {"tools": [{"name": "Task", "input": {"description": "count", "prompt": SUBAGENT_PROMPT,
                                                   "subagent_type": "general-purpose"}}]},  # fmt: skip
            {"tools": [{"name": "Bash", "input": {"command": "seq 1 40000"}},
                       {"name": "Write", "input": {"file_path": str(project / "notes.md"), "content": "n\n"}}]},
            {"text": "Counted."},
            {"text": "After the compaction."},
            {"text": "In the fork."},
        ],
        "agents": [{"prompt": SUBAGENT_PROMPT, "steps": [
            {"tools": [{"name": "Bash", "input": {"command": "seq 1 30000"}}]}, {"text": "Done counting."}]}],
    }  # fmt: skip


@pytest.mark.timeout(180)
async def test_every_file_of_the_session_store_and_of_a_fork_is_private(project, home, tmp_path):
    server = EmulatorServer(policy=ScriptPolicy(_steps(project)), summarizer=AgentSummarizer())
    server.start()
    env = {"AGENT_REPL_HOME": str(home), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-test-modes",
           "AGENT_REPL_CONTEXT_WINDOW": "40000"}  # fmt: skip
    settings = load_settings(cwd=project, env=env, overrides={"skip_permissions": True})
    old_umask = os.umask(0o022)  # files would be 0644 and folders 0755 if a writer relied on it
    try:
        session = await open_session(settings, project)
        session.memory.first_after_tokens = 1_000
        try:
            [e async for e in session.run_turn("count")]
            assert await session.memory.wait_for_extraction(60)
            assert await compact_now(session, "manual").run_to_end() is True
            [e async for e in session.run_turn("go on")]
            transcript = session.sink.path
        finally:
            await close_session(session)
        # Moved out of the store, the session is forked when resumed by its path.
        moved = tmp_path / "elsewhere" / transcript.name
        shutil.copytree(transcript.with_suffix(""), moved.with_suffix(""))
        moved.write_bytes(transcript.read_bytes())
        resume = find_resume_source(settings, project.resolve(), str(moved), latest=False)
        assert resume is not None and not resume.owned
        fork = await open_session(settings, project, resume=resume)
        try:
            [e async for e in fork.run_turn("and in the fork")]
            forked = fork.sink.path
        finally:
            await close_session(fork)
    finally:
        os.umask(old_umask)
        server.stop()

    files = files_under(home)
    names = {p.relative_to(forked.with_suffix("")).parts[0] for p in files if forked.with_suffix("") in p.parents}
    assert {"tool-results", "subagents"} <= names, names  # the fork's copies were written
    assert any(p.name.endswith(".meta.json") for p in files if forked.with_suffix("") in p.parents)
    assert any(p.name == "memory.md" for p in files)
    assert any("file-history" in p.parts for p in files)
    wrong = {str(p.relative_to(home)): oct(stat.S_IMODE(p.stat().st_mode)) for p in files
             if stat.S_IMODE(p.stat().st_mode) != 0o600}  # fmt: skip
    assert wrong == {}
    folders = [home, *(p for p in home.rglob("*") if p.is_dir())]
    wrong = {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p in folders if stat.S_IMODE(p.stat().st_mode) != 0o700}
    assert wrong == {}
