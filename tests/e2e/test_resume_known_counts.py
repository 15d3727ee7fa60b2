"""A session written by the real loop carries its exact token counts (`token-counts` records), so
`agent-repl --resume ID -p hi` makes its first request without loading the cl100k encoder, and
that request is the one a resume that counts every text exactly makes."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from agent_repl.bootstrap import close_session, open_session
from agent_repl.emulator.policies.summary import request_kind

from .compaction_support import run, settings_for
from .conftest import agent_env
from .test_bounds_first_loop import _without_ids
from .test_compaction import prompt, reading_steps
from .test_startup_imports import _RUN_AND_LIST_MODULES

TURNS = 6


async def _write_session(emulated, project: Path, home: Path) -> str:
    settings = settings_for(emulated.server, project, api_compaction=False)
    settings = settings.model_copy(update={"home": home})
    session = await open_session(settings, project)
    try:
        for turn in range(TURNS):
            await run(session, prompt(turn))
            if session.memory is not None:
                await session.memory.wait_for_extraction(timeout=30)
    finally:
        await close_session(session)
    return session.session_id


def _resume(emulated, project: Path, home: Path, session_id: str) -> tuple[dict, set[str]]:
    """(the first main request of `--resume ID -p hi`, the top-level modules it had loaded at exit)."""
    import subprocess

    seen = len(emulated.server.recordings.messages)
    env = {**agent_env(emulated, home), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", _RUN_AND_LIST_MODULES, "--resume", session_id, "-p", "hi"],
        cwd=project, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.startswith("MODULES ")]
    requests = [
        e.body for e in list(emulated.server.recordings.messages)[seen:] if e.status == 200 and request_kind(e.body) is None
    ]
    return requests[0], {m.split(".")[0] for m in line.split()[1:]}


def _comparable(body: dict) -> str:
    return _without_ids(json.dumps({k: body[k] for k in ("system", "tools", "messages", "max_tokens")}))


async def test_a_resumed_print_run_knows_its_sessions_counts_and_sends_the_same_request(tmp_path, emulator):
    emulated = emulator([*reading_steps(TURNS), {"text": "hello"}, {"text": "hello"}])
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    session_id = await _write_session(emulated, project, home)
    [transcript] = sorted((home / "projects").glob("*/*.jsonl"))
    lines = transcript.read_text().splitlines(keepends=True)
    assert any('"type":"token-counts"' in line for line in lines)
    # The same session without the counts, in a home of its own: the resume counts every text.
    uncounted_home = tmp_path / "home-without-counts"
    shutil.copytree(home, uncounted_home)
    copy = uncounted_home / transcript.relative_to(home)
    copy.write_text("".join(line for line in lines if '"type":"token-counts"' not in line))

    uncounted, uncounted_modules = _resume(emulated, project, uncounted_home, session_id)
    counted, counted_modules = _resume(emulated, project, home, session_id)
    # Without the counts this resume needs the encoder: its estimate is over the trigger's floor.
    assert "tiktoken" in uncounted_modules
    assert "tiktoken" not in counted_modules
    assert _comparable(counted) == _comparable(uncounted)
