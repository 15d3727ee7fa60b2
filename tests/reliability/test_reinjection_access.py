"""After a compaction, only what was read is read again.

A hostile model names files it was never given: a secret outside the project, a `~/.bashrc`,
`/proc/self/environ`, a file that did not exist yet, a file later swapped for a link to the
secret, an Edit and a Write outside the project, each refused or failed (and a file read that
is a folder by the time of the compaction). It also reads one file
outside the project the user allowed once, a protected file in the project, and two ordinary
files (one in an added folder). Then the session is compacted and goes on, through the real
loop against the emulator: no refused or failed call's file reaches the model, the list of
paths after the summary names none of them, and only the two ordinary files come back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.config.settings import load_settings
from agent_repl.core.loop.compact import compact_now
from agent_repl.core.permissions.rules import Decision, PermissionRequest
from agent_repl.emulator.policies import CallablePolicy, ScriptPolicy
from agent_repl.emulator.policies.base import summary_reply
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer

REINJECTED = "was read or edited before the conversation was compacted"
TOUCHED = "Paths the tool calls named before the conversation was compacted"


def _policy(steps: list[dict[str, Any]]) -> CallablePolicy:
    script = ScriptPolicy({"steps": steps})

    def reply(request):  # type: ignore[no-untyped-def]
        kind = request_kind(request.body)
        return summary_reply(request, kind) if kind else script.reply(request)

    policy = CallablePolicy(reply)
    policy.completed = script.completed  # type: ignore[method-assign]
    return policy


def _read(path: Path | str) -> dict[str, Any]:
    return {"name": "Read", "input": {"file_path": str(path)}}


@pytest.mark.timeout(180)
async def test_a_compaction_reads_again_only_files_whose_call_was_allowed_and_succeeded(project, home, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("OUTSIDE-SECRET-7c1f\n")
    approved = outside / "approved.txt"
    approved.write_text("APPROVED-ONCE-TEXT\n")
    user_home = tmp_path / "userhome"
    user_home.mkdir()
    bashrc = user_home / ".bashrc"
    bashrc.write_text("export BASHRC-SECRET-9d2e=1\n")
    added = tmp_path / "added"
    added.mkdir()
    (added / "notes.md").write_text("ADDED-FOLDER-NOTES\n")
    (project / ".envrc").write_text("export ENVRC-PROTECTED=1\n")
    (project / "link.txt").write_text("LINK-ORIGINAL\n")
    (project / "swap.txt").write_text("SWAP-ORIGINAL\n")
    missing = project / "missing.py"
    app = project / "src" / "app.py"

    steps = [
        {"tools": [_read(project / "swap.txt"), _read(secret), _read(bashrc), _read("/proc/self/environ"), _read(missing), _read(approved),
                   _read(project / "link.txt"), _read(app), _read(project / ".envrc"),
                   _read(added / "notes.md")]},  # fmt: skip
        {"tools": [{"name": "Edit", "input": {"file_path": str(secret), "old_string": "OUTSIDE", "new_string": "X"}},
                   {"name": "Write", "input": {"file_path": str(bashrc), "content": "x\n"}},
                   {"name": "Grep", "input": {"pattern": "SECRET", "path": str(outside)}},
                   {"name": "Bash", "input": {"command": f"cat {secret}"}}]},  # fmt: skip
        {"text": "Looked around."},
        {"text": "Carrying on after the compaction."},
    ]
    asked: list[PermissionRequest] = []

    async def ask(request: PermissionRequest) -> Decision:
        asked.append(request)
        return Decision.ALLOW_ONCE if request.key == str(approved) else Decision.DENY

    server = EmulatorServer(policy=_policy(steps), summarizer=AgentSummarizer())
    server.start()
    env = {"AGENT_REPL_HOME": str(home), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-test-reinject"}
    settings = load_settings(cwd=project, env=env, overrides={"add_dirs": [added]})
    session = await open_session(settings, project, ask=ask)
    try:
        [e async for e in session.run_turn("look around")]
        # Between the calls and the compaction: the missing file appears, the link now leads out.
        missing.write_text("MISSING-SECRET-3b8a\n")
        (project / "link.txt").unlink()
        (project / "link.txt").symlink_to(secret)
        (project / "swap.txt").unlink()
        (project / "swap.txt").mkdir()  # a folder now: nothing to read, and no crash
        assert await compact_now(session, "manual").run_to_end() is True
        [e async for e in session.run_turn("carry on")]
        bodies = [e.body for e in server.recordings.messages if e.status == 200]
    finally:
        await close_session(session)
        server.stop()

    assert {r.key for r in asked} >= {str(secret), str(bashrc), str(approved)}, [r.key for r in asked]
    everything = json.dumps(bodies, ensure_ascii=False)
    for text in ("OUTSIDE-SECRET-7c1f", "BASHRC-SECRET-9d2e", "MISSING-SECRET-3b8a"):
        assert text not in everything, f"{text} reached the model"
    last = bodies[-1]["messages"]
    reinjected = [
        block["text"]
        for message in last
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "text" and REINJECTED in block["text"]
    ]
    named = sorted(text.split("\n")[2] for text in reinjected)
    assert named == sorted([str(app), str(added / "notes.md")]), named
    touched = next(
        block["text"]
        for message in last
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "text" and TOUCHED in block["text"]
    )
    assert f"- {app}" in touched and f"- {approved}" in touched
    for refused in (secret, bashrc, "/proc/self/environ", missing, outside):
        assert f"- {refused}\n" not in touched + "\n", f"{refused} is listed"
