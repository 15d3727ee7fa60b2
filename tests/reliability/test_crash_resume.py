"""Crash safety: SIGKILL `agent-repl -p` at random moments, then resume with `--continue -p`.

Each run starts the real CLI in a subprocess on a scripted session (a parallel Glob/Grep/Read
batch, Bash calls that sleep, a Bash output large enough to be persisted, a final answer), kills
it after a delay drawn from a seeded RNG, and resumes it. One run in four also cuts the last
record in half after the kill, as a crash in the middle of a write would.

For every run: the resume succeeds; every line written before the kill is still there, first in
the file; every message on those lines is in the resumed history (so at most the in-flight record
is lost); the first request after the resume answers every tool_use (the emulator would reject it
otherwise); and every persisted-output preview names a file that holds the full output.

The resume goes through the CLI's own `prepare_launch` and print mode in this process (the
imports cost seconds per subprocess); the first run of each test resumes in a real subprocess.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from agent_repl.bootstrap import close_session, open_session
from agent_repl.cli import build_parser, prepare_launch
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.print_mode import run_print_mode
from agent_repl.transcript.loader import load_session

from .support import complete_records, persisted_results, transcript_files, unanswered_in_request

SEED = 20_260_401
BIG_COMMAND = "seq 1 30000"


def steps(project: Path) -> list[dict[str, Any]]:
    return [
        {
            "text": "Looking around first.",
            "tools": [
                {"name": "Glob", "input": {"pattern": "**/*.py", "path": str(project)}},
                {"name": "Grep", "input": {"pattern": "TODO", "path": str(project), "output_mode": "content"}},
                {"name": "Read", "input": {"file_path": str(project / "README.md")}},
            ],
        },
        {"tools": [{"name": "Bash", "input": {"command": "sleep 0.3; echo one >> ran.log"}}]},
        {"text": "Counting.", "tools": [{"name": "Bash", "input": {"command": BIG_COMMAND}}]},
        {
            "tools": [
                {"name": "Read", "input": {"file_path": str(project / "src" / "app.py")}},
                {"name": "Bash", "input": {"command": "sleep 0.2; echo two >> ran.log; wc -l ran.log"}},
            ]
        },
        {"text": "All done."},
        {"text": "Resumed, and everything is in order."},
    ]


def agent_env(server: EmulatorServer, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    env.update(
        ANTHROPIC_BASE_URL=server.base_url,
        ANTHROPIC_API_KEY="sk-ant-test-crash",
        AGENT_REPL_HOME=str(home),
        PYTHONUNBUFFERED="1",
    )
    return env


FIRST = ["-p", "Work through the plan.", "--allowed-tools", "Bash"]
RESUME = ["--continue", "-p", "Are you still there?", "--output-format", "json", "--allowed-tools", "Bash"]


def start_agent(server: EmulatorServer, project: Path, home: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "agent_repl", *FIRST],
        cwd=project,
        env=agent_env(server, home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_for_first_request(server: EmulatorServer, process: subprocess.Popen[bytes], limit_s: float = 120) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if server.recordings.messages:
            return True
        if process.poll() is not None:
            return False
        time.sleep(0.002)
    return False


def resume_in_process(project: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> tuple[int, str]:
    """`agent-repl --continue -p ...` through the CLI's own launch code, without a new interpreter."""
    for key in [k for k in os.environ if k.startswith(("ANTHROPIC_", "AGENT_REPL_"))]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        if key.startswith(("ANTHROPIC_", "AGENT_REPL_")):
            monkeypatch.setenv(key, value)
    args = build_parser().parse_args(RESUME)

    async def run() -> tuple[int, str]:
        with ExitStack() as stack:
            launch = prepare_launch(args, project, stack)
            assert launch.resume is not None and launch.resume.owned
            session = await open_session(launch.settings, project, resume=launch.resume)
            out, err = io.StringIO(), io.StringIO()
            try:
                status = await run_print_mode(session, args.print_prompt, output_format="json", out=out, err=err)
            finally:
                await close_session(session)
            return status, out.getvalue() + err.getvalue()

    return asyncio.run(run())


def resume_in_subprocess(server: EmulatorServer, project: Path, home: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "agent_repl", *RESUME],
        cwd=project,
        env=agent_env(server, home),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stdout + done.stderr


def phase_of(records: list[dict[str, Any]], exited: bool) -> str:
    """Where the kill landed, from the complete records written before it."""
    if exited:
        return "after exit"
    messages = [r for r in records if r.get("type") in ("user", "assistant")]
    blocks = [
        (r["type"], b)
        for r in messages
        if isinstance(r["message"]["content"], list)
        for b in r["message"]["content"]
    ]
    used = {b["id"] for _, b in blocks if b.get("type") == "tool_use"}
    answered = {b["tool_use_id"] for _, b in blocks if b.get("type") == "tool_result"}
    if used - answered:
        return "running tools"
    last = messages[-1] if messages else None
    if last is not None and last["type"] == "assistant":
        return "after the answer"
    return "waiting for a reply"


def tear_last_record(path: Path, rng: random.Random) -> bool:
    """Cut the last record in half, as a crash in the middle of its write would."""
    data = path.read_bytes()
    if not data.endswith(b"\n"):
        return False
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    cut = rng.randint(start + 1, len(data) - 2)
    with path.open("r+b") as f:
        f.truncate(cut)
    return True


def expected_output(command: str) -> bytes | None:
    if command == BIG_COMMAND:
        return subprocess.run(["seq", "1", "30000"], capture_output=True, check=True).stdout
    return None


def check_persisted(records: list[dict[str, Any]]) -> int:
    commands = {
        b["id"]: b["input"].get("command", "")
        for r in records
        if r.get("type") == "assistant"
        for b in r["message"]["content"]
        if b.get("type") == "tool_use"
    }
    found = persisted_results(records)
    for tool_use_id, path, extra in found:
        assert path.parent.name == "tool-results", path
        assert path.is_file(), f"the preview for {tool_use_id} names a missing file {path}"
        data = path.read_bytes()
        if "persistedOutputSize" in extra:
            assert len(data) == extra["persistedOutputSize"], (tool_use_id, len(data), extra)
        expected = expected_output(commands.get(tool_use_id, ""))
        if expected is not None:
            assert data == expected, f"{path} does not hold the full output of {commands[tool_use_id]!r}"
    return len(found)


@pytest.mark.slow
@pytest.mark.timeout(7200)
def test_sigkill_at_random_moments_then_resume(tmp_path, monkeypatch, size, figures):
    runs = size(8, 200)  # the first one is not killed: it times a whole session for the kill delays
    rng = random.Random(SEED)
    server = EmulatorServer(policy=ScriptPolicy({"steps": []}))
    server.start()
    phases: Counter[str] = Counter()
    torn_runs = lost_records = persisted_checked = stray_temp_files = 0
    window = 0.0
    try:
        for run in range(runs):
            project = tmp_path / f"run{run}" / "project"
            home = tmp_path / f"run{run}" / "home"
            (project / "src").mkdir(parents=True)
            (project / "README.md").write_text("# Demo\n\nA tiny project.\n")
            (project / "src" / "app.py").write_text("def main():\n    # TODO: greet properly\n    print('hi')\n")
            server.reset(policy=ScriptPolicy({"steps": steps(project)}))

            process = start_agent(server, project, home)
            # The clock starts at the first request: before it, the process is only importing.
            assert wait_for_first_request(server, process), "the agent never sent a request"
            started = time.monotonic()
            if run == 0:
                assert process.wait(timeout=120) == 0
                window = (time.monotonic() - started) * 1.2
            else:
                time.sleep(rng.uniform(0, window))
            exited = process.poll() is not None
            if not exited:
                process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            [transcript] = transcript_files(home)

            torn = rng.random() < 0.25 and tear_last_record(transcript, rng)
            torn_runs += torn
            before = transcript.read_bytes()
            complete_lines = before.split(b"\n")[:-1]
            before_records = complete_records(before)
            phases[phase_of(before_records, exited)] += 1
            stray_temp_files += len(list(transcript.parent.glob("*/tool-results/.bash-*")))
            exchanges_before = len(server.recordings.messages)

            if run == 0:
                status, output = resume_in_subprocess(server, project, home)
            else:
                status, output = resume_in_process(project, monkeypatch, agent_env(server, home))
            assert status == 0, f"run {run}: the resume failed: {output}"

            after = transcript.read_bytes()
            # Every complete line written before the kill is still there, in place.
            assert after.split(b"\n")[: len(complete_lines)] == complete_lines, f"run {run}"
            loaded = load_session(transcript)
            kept = {m.uuid for m in loaded.messages}
            before_messages = {r["uuid"] for r in before_records if r.get("type") in ("user", "assistant", "system")}
            assert before_messages <= kept, f"run {run}: lost {before_messages - kept}"
            expected_warnings = 1 if torn else 0
            assert len(loaded.warnings) == expected_warnings, (run, loaded.warnings)
            lost_records += len(loaded.warnings)

            resumed_requests = server.recordings.messages[exchanges_before:]
            assert resumed_requests, "the resume sent no request"
            assert [e.status for e in resumed_requests] == [200] * len(resumed_requests)
            for exchange in resumed_requests:
                assert unanswered_in_request(exchange.body) == [], f"run {run}"
            persisted_checked += check_persisted(complete_records(after))
    finally:
        server.stop()
    figures.update(
        runs=runs,
        kill_window_s=round(window, 2),
        phases=dict(sorted(phases.items())),
        torn_writes=torn_runs,
        records_lost=lost_records,
        persisted_outputs_checked=persisted_checked,
        stray_bash_temp_files=stray_temp_files,
    )


async def test_a_record_written_after_a_torn_line_starts_on_a_new_line(project, home, monkeypatch):
    """What a crash in the middle of a write leaves must not swallow the next session's first record."""
    server = EmulatorServer(policy=ScriptPolicy({"steps": [{"text": "One."}, {"text": "Two."}]}))
    server.start()
    for key, value in agent_env(server, home).items():
        if key.startswith(("ANTHROPIC_", "AGENT_REPL_")):
            monkeypatch.setenv(key, value)

    async def print_mode(argv: list[str]) -> tuple[int, str]:
        args = build_parser().parse_args(argv)
        with ExitStack() as stack:
            launch = prepare_launch(args, project, stack)
            session = await open_session(launch.settings, project, resume=launch.resume)
            out = io.StringIO()
            try:
                status = await run_print_mode(session, args.print_prompt, out=out, err=io.StringIO())
            finally:
                await close_session(session)
        return status, out.getvalue()

    try:
        assert await print_mode(["-p", "first"]) == (0, "One.\n")
        [transcript] = transcript_files(home)
        with transcript.open("ab") as f:
            f.write(b'{"parentUuid":"x","type":"assistant","message":{"content":[{"type":"te')
        assert await print_mode(["--continue", "-p", "second"]) == (0, "Two.\n")
    finally:
        server.stop()
    loaded = load_session(transcript)
    assert [m.text() for m in loaded.messages if m.type != "system"][-2:] == ["second", "Two."]
    assert len(loaded.warnings) == 1 and "malformed JSON" in loaded.warnings[0]
    lines = transcript.read_bytes().split(b"\n")
    torn = next(i for i, line in enumerate(lines) if line.endswith(b'{"type":"te'))
    # Every line after the torn one is whole (the last entry, then the turn's side records).
    entries = [r for r in map(json.loads, filter(None, lines[torn + 1 :])) if "message" in r]
    assert entries[-1]["message"]["content"][0]["text"] == "Two."
