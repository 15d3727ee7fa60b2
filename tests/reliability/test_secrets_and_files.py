"""Secrets and files: the API key is never stored, and the session's files are private.

A session runs with a recognizable fake key in the environment. Its tools print the environment
(inline and large enough to be persisted: the key is not in it), read and grep a `.env` file
holding the key, and the session's notes are extracted. Then every file under AGENT_REPL_HOME is searched for the key,
and the mode of every directory (0700) and file (0600) of the session is checked.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.config.settings import load_settings
from agent_repl.core.model.events import ToolResultEvent, TurnEnded
from agent_repl.core.tooling.redaction import REDACTED, SecretRedactor, redact_file
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer

from .support import files_under

FAKE_KEY = "sk-ant-api03-RELIABILITY-FAKE-KEY-5f3c9a0e7d1b4c2a8e6f0d9c7b5a3e1f"


def steps(project: Path) -> list[dict]:
    env_file = project / ".env"
    return [
        {
            "text": "Looking at the environment.",
            "tools": [
                {"name": "Bash", "input": {"command": "env | sort"}},
                {"name": "Bash", "input": {"command": "env; seq 1 20000; env"}},
                {"name": "Bash", "input": {"command": "echo $ANTHROPIC_API_KEY >&2; exit 3"}},
            ],
        },
        {
            "tools": [
                {"name": "Read", "input": {"file_path": str(env_file)}},
                {"name": "Grep", "input": {"pattern": "API_KEY", "path": str(project), "output_mode": "content"}},
                {"name": "Grep", "input": {"pattern": "sk-ant", "path": str(project), "output_mode": "content",
                                           "-C": 2}},
            ]
        },
        {"text": "Done looking."},
        {"text": "Second turn."},
    ]


@pytest.mark.timeout(180)
async def test_the_api_key_never_reaches_a_file_and_session_files_are_private(project, home, monkeypatch):
    (project / ".env").write_text(f"# local secrets\nANTHROPIC_API_KEY={FAKE_KEY}\nOTHER=1\n")
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps(project)}), summarizer=AgentSummarizer())
    server.start()
    old_umask = os.umask(0o022)  # the usual umask: files would be 0644 if the code relied on it
    try:
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        env = {"AGENT_REPL_HOME": str(home), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": FAKE_KEY,
               "AGENT_REPL_CONTEXT_WINDOW": "40000"}
        settings = load_settings(cwd=project, env=env, overrides={"skip_permissions": True})
        session = await open_session(settings, project)
        session.memory.first_after_tokens = 1_000  # notes after the first turn, so they can be searched too
        results: list[ToolResultEvent] = []
        try:
            for prompt in ("show me the environment", "and again"):
                events = [e async for e in session.run_turn(prompt)]
                results += [e for e in events if isinstance(e, ToolResultEvent)]
                assert [e.reason for e in events if isinstance(e, TurnEnded)] == ["completed"]
            assert await session.memory.wait_for_extraction(60)
        finally:
            await close_session(session)
    finally:
        os.umask(old_umask)
        server.stop()

    # Commands never got the key; Read and Grep really saw it in .env, so there was something to redact.
    assert len(results) == 6
    texts = [e.message.tool_results()[0].text() for e in results]
    assert all("ANTHROPIC_API_KEY=" not in text for text in texts[:3]), texts[0]
    assert all(REDACTED in text for text in texts[3:]), [e.summary for e in results]
    assert any(isinstance(e.message.tool_use_result, dict) and "persistedOutputPath" in e.message.tool_use_result
               for e in results)

    files = files_under(home)
    session_dir = home / "projects"
    kinds = {p.name if p.suffix != ".txt" else "tool-result" for p in files}
    assert "memory.md" in kinds and "tool-result" in kinds and any(p.suffix == ".jsonl" for p in files)
    for path in files:
        assert FAKE_KEY.encode() not in path.read_bytes(), f"the key is in {path}"
    # The model never saw it either.
    for exchange in server.recordings.messages:
        assert FAKE_KEY.encode() not in exchange.body_bytes

    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for directory in [home, *(p for p in session_dir.rglob("*") if p.is_dir())]:
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory


def test_redacting_a_file_catches_a_key_split_across_chunks(tmp_path, monkeypatch):
    import agent_repl.core.tooling.redaction as redaction

    monkeypatch.setattr(redaction, "_CHUNK_BYTES", 16)
    path = tmp_path / "out.txt"
    body = ("x" * 13 + FAKE_KEY + "\n") * 5
    path.write_text(body)
    assert redact_file(path, (FAKE_KEY,))
    assert path.read_text() == ("x" * 13 + REDACTED + "\n") * 5
    assert not redact_file(path, (FAKE_KEY,))


def test_short_or_missing_keys_redact_nothing():
    assert SecretRedactor.of(None, "", "none").secrets == ()
    assert SecretRedactor.of(FAKE_KEY).text(f"key={FAKE_KEY};") == f"key={REDACTED};"


def test_the_prompt_history_is_private_too(tmp_path):
    from agent_repl.ui.prompt_history import PromptHistory, history_path

    home = tmp_path / "home"
    path = history_path(home, tmp_path / "project")
    old_umask = os.umask(0o022)
    try:
        PromptHistory(path).append("a prompt")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700 and stat.S_IMODE(home.stat().st_mode) == 0o700
        os.chmod(path, 0o644)  # written by an older version
        PromptHistory(path).append("next prompt")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        os.umask(old_umask)
    assert PromptHistory(path).load().entries[-1] == "next prompt"
