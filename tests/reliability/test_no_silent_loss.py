"""No silent loss: one writer per session, compactions that cannot be cut in half, no process
left writing into the session, a full disk or read-only home as one clear line, NUL bytes refused.

Each test does what a user (or a crash) would: two terminals on one session, a kill in the middle
of a compaction, `setsid yes &`, a disk that fills up, a home that cannot be written.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_repl.bootstrap import close_session, find_resume_source, open_session
from agent_repl.core.config.settings import load_settings
from agent_repl.core.model.events import ToolResultEvent, TurnEnded
from agent_repl.core.model.messages import UserMessage
from agent_repl.core.tooling.tool import ToolContext
from agent_repl.emulator.policies import CallablePolicy, Reply, ScriptPolicy
from agent_repl.emulator.policies.base import text_block, tool_use_block
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer
from agent_repl.tools.bash import Bash, BashArgs
from agent_repl.transcript.loader import load_session
from agent_repl.transcript.paths import SessionPaths

from .support import complete_records, transcript_files

REPO = Path(__file__).resolve().parents[2]
AGENT = Path(sys.executable).with_name("agent-repl")


def agent_env(home: Path, server: EmulatorServer | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    env.update(
        AGENT_REPL_HOME=str(home),
        ANTHROPIC_API_KEY="sk-ant-test-no-silent-loss",
        ANTHROPIC_BASE_URL=server.base_url if server else "http://127.0.0.1:9",
    )
    return env


def run_agent(args: list[str], cwd: Path, env: dict[str, str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(AGENT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, **kwargs)  # fmt: skip


def slow_or_quick(request: Any) -> Reply:
    """`slow` runs a Bash call that lasts until the file `release` exists in its folder; anything
    else is answered at once."""
    last = request.body["messages"][-1]
    blocks = last["content"] if isinstance(last["content"], list) else [{"type": "text", "text": last["content"]}]
    if any("quick" in str(b.get("text", "")) for b in blocks):
        return Reply([text_block("quick answer")])
    if any(b.get("type") == "tool_result" for b in blocks):
        return Reply([text_block("slow done")])
    if any("slow" in str(b.get("text", "")) for b in blocks):
        return Reply([tool_use_block("toolu_slow", "Bash", {"command": "until [ -e release ]; do sleep 0.1; done; echo slept"})], "tool_use")
    return Reply([text_block("?")])


# --- one writer per session --------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_a_second_process_on_a_busy_session_forks_it_and_never_interleaves(project, home):
    with EmulatorServer(policy=CallablePolicy(slow_or_quick)) as server:
        env = agent_env(home, server)
        first = subprocess.Popen([str(AGENT), "-p", "slow", "--allowed-tools", "Bash"], cwd=project, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        deadline = time.monotonic() + 60
        while not any("toolu_slow" in p.read_text() for p in transcript_files(home)):
            assert time.monotonic() < deadline and first.poll() is None, first.communicate()
            time.sleep(0.05)
        [busy] = transcript_files(home)
        # The first stays busy until the second has finished, however long either takes to start
        # (a fixed sleep here raced the second's start on a loaded machine).
        second = run_agent(["--continue", "-p", "quick"], project, env)
        (project / "release").touch()
        out, err = first.communicate(timeout=60)
        busy_text, fork_files = busy.read_text(), [p for p in transcript_files(home) if p != busy]
        # Both processes are gone: the session is free again and is continued in place.
        again = run_agent(["--resume", busy.stem, "-p", "quick"], project, env)
    assert first.returncode == 0, err
    assert second.returncode == 0, second.stderr
    assert f"session {busy.stem} is open in another agent-repl (pid {first.pid})" in second.stderr
    assert second.stdout.strip() == "quick answer"
    [fork] = fork_files
    original, forked = load_session(busy), load_session(fork)
    assert original.warnings == [] and forked.warnings == []
    assert "quick" not in busy_text and out.strip() == "slow done"
    assert [m.text() for m in original.messages if isinstance(m, UserMessage) and not m.is_meta][0] == "slow"
    # The fork holds the busy session's history up to the moment it was forked, then its own turn.
    texts = [m.text() for m in forked.messages if isinstance(m, UserMessage) and not m.is_meta]
    assert texts[0] == "slow" and texts[-1] == "quick"
    assert again.returncode == 0 and "is open in" not in again.stderr
    assert "quick" in busy.read_text()


async def test_a_lock_goes_with_its_session_and_with_a_killed_process(project, home):
    settings = load_settings(cwd=project, env={"AGENT_REPL_HOME": str(home), "ANTHROPIC_API_KEY": "sk-ant-test",
                                               "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})  # fmt: skip
    first = await open_session(settings, project)
    await first.append(UserMessage(content="hello"))
    source = find_resume_source(settings, project, first.session_id, latest=False)
    second = await open_session(settings, project, resume=source)  # the same process counts as another
    assert second.session_id != first.session_id and second.notices
    await close_session(second)
    await close_session(first)
    third = await open_session(settings, project, resume=source)
    assert third.session_id == first.session_id and third.notices == []
    await close_session(third)
    # A process killed while holding the lock leaves none behind.
    paths = SessionPaths(home=home, cwd=project.resolve(), session_id=first.session_id)
    holder = subprocess.Popen(  # noqa: ASYNC220 - it must run while this test holds the event loop
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from agent_repl.transcript.lock import SessionLock; from agent_repl.transcript.paths import SessionPaths; "
         f"lock = SessionLock.acquire(SessionPaths(Path({str(home)!r}), Path({str(project.resolve())!r}), "
         f"{first.session_id!r})); print(lock is not None, flush=True); time.sleep(60)"],
        cwd=REPO, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == "True"
    busy = await open_session(settings, project, resume=source)
    assert busy.session_id != first.session_id
    await close_session(busy)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=10)
    free = await open_session(settings, project, resume=source)
    assert free.session_id == paths.session_id
    await close_session(free)


# --- compactions are never cut in half ----------------------------------------------------------


async def test_a_compaction_is_one_write_and_a_cut_one_keeps_the_earlier_context(project, home, monkeypatch):
    import agent_repl.transcript.writer as writer_module

    writes: list[bytes] = []
    real_append = writer_module._append_whole

    def recording_append(fd: int, data: bytes) -> None:
        writes.append(data)
        real_append(fd, data)

    monkeypatch.setattr(writer_module, "_append_whole", recording_append)
    steps = [{"text": "First answer, about the early topic."}, {"text": "Second answer."}]
    with EmulatorServer(policy=ScriptPolicy({"steps": steps}), summarizer=AgentSummarizer()) as server:
        env = {"AGENT_REPL_HOME": str(home), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-t"}
        settings = load_settings(cwd=project, env=env)
        session = await open_session(settings, project)
        try:
            [e async for e in session.run_turn("remember the early topic: tangerines")]
            from agent_repl.core.loop.compact import compact_now

            assert await compact_now(session, "manual").run_to_end() is True
        finally:
            await close_session(session)
    path = transcript_files(home)[0]
    lines = path.read_bytes().splitlines(keepends=True)
    [boundary] = [m for m in load_session(path).messages if getattr(m, "subtype", "") == "compact_boundary"]
    boundary_line = next(i for i, line in enumerate(lines) if b'"compact_boundary"' in line)
    summary_uuid = f'"uuid":"{boundary.metadata["summaryUuid"]}"'.encode()
    summary_line = next(i for i, line in enumerate(lines) if summary_uuid in line)
    assert summary_line == boundary_line + 1
    [together] = [w for w in writes if b'"compact_boundary"' in w]
    assert lines[boundary_line] in together and lines[summary_line] in together  # one write holds both

    # A crash right after the boundary (an older writer, or a write torn in the middle):
    path.write_bytes(b"".join(lines[: boundary_line + 1]))
    loaded = load_session(path)
    assert any("compaction was cut off before its summary" in w for w in loaded.warnings)
    with EmulatorServer(policy=ScriptPolicy({"steps": [{"text": "Resumed."}]})) as server:
        settings = settings.model_copy(update={"base_url": server.base_url})
        resumed = await open_session(settings, project, resume=find_resume_source(settings, project, None, latest=True))
        try:
            [e async for e in resumed.run_turn("what was the early topic?")]
        finally:
            await close_session(resumed)
        sent = server.recordings.messages[-1].body_bytes
    assert b"tangerines" in sent  # the earlier context is still in the model's view


# --- nothing a command started writes into the session after it -------------------------------


def _processes_writing_under(directory: Path) -> list[str]:
    """Other processes with a file under `directory` open (a deleted file included)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            targets = [os.readlink(fd) for fd in (entry / "fd").iterdir()]
        except OSError:
            continue
        found += [f"{entry.name}: {t}" for t in targets if t.startswith(str(directory))]
    return found


def _alive_with(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                    if state != "Z":
                        pids.append(int(entry.name))
            except OSError:
                continue
    return pids


TICKER = "exec -a {m} bash -c \"while :; do echo tick; sleep 0.01; done\""
BACKGROUND_WRITERS = [
    "setsid bash -c 'exec -a {m} yes' &",  # the flood: hundreds of MB a second
    f"setsid bash -c '{TICKER}' &",
    f"(setsid bash -c '{TICKER}' &)",
    f"nohup bash -c '{TICKER}' &",
    f"setsid bash -c '{TICKER}' < /dev/null &",
]


@pytest.mark.parametrize("command", BACKGROUND_WRITERS)
async def test_no_background_process_keeps_writing_into_the_session_after_the_call(tmp_path, command):
    marker = f"t13s-writer-{os.getpid()}-{BACKGROUND_WRITERS.index(command)}"
    results = tmp_path / "session" / "tool-results"
    ctx = ToolContext(cwd=tmp_path, tool_results_dir=results)
    # The pause lets the writer leave the shell's process group before the shell exits.
    script = f"echo started\n{command.format(m=marker)}\nsleep 0.2"
    try:
        output = await Bash(kill_grace_seconds=0.5).run(BashArgs(command=script), ctx)
        text = str(output.content)
        assert text.startswith(("started\ntick", "<persisted-output>")), text[:300]  # it really wrote
        assert re.search(r"Stopped \d+ background process", text)
        await asyncio.sleep(0.3)
        assert _processes_writing_under(tmp_path / "session") == []
        assert _alive_with(marker) == []
        size = sum(p.stat().st_size for p in results.rglob("*") if p.is_file())
        await asyncio.sleep(0.5)
        assert sum(p.stat().st_size for p in results.rglob("*") if p.is_file()) == size
    finally:
        for pid in _alive_with(marker):
            os.kill(pid, signal.SIGKILL)


def test_a_background_process_with_its_own_output_keeps_running(tmp_path):
    """`cmd > log 2>&1 &` is how a model keeps a server running: it never touches the session."""
    ctx = ToolContext(cwd=tmp_path, tool_results_dir=tmp_path / "session" / "tool-results")
    # The trailing dot keeps this marker from matching another worker's (pid 2430 within pid 24305).
    marker = f"t13s-server-{os.getpid()}."
    pid_file, log = tmp_path / "server.pid", tmp_path / "server.log"
    script = f"setsid bash -c 'echo $$ > {pid_file}; exec -a {marker} sleep 30' > {log} 2>&1 &\necho started"
    try:
        output = asyncio.run(Bash(kill_grace_seconds=0.5).run(BashArgs(command=script), ctx))
        assert output.content == "started"
        # The detached command may not have started yet on a loaded machine: wait for its own pid.
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text().endswith("\n")):
            assert time.monotonic() < deadline, f"never started; log: {log.read_text()!r}"
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        while _alive_with(marker) != [pid] and _pid_running(pid):
            assert time.monotonic() < deadline, "the background command never reached its exec"
            time.sleep(0.05)
        assert _alive_with(marker) == [pid], f"pid {pid} was stopped; log: {log.read_text()!r}"
    finally:
        for found in _alive_with(marker):
            os.kill(found, signal.SIGKILL)


def _pid_running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


CHILD_AGENT = """
import asyncio, sys
from pathlib import Path
from agent_repl.core.tooling.tool import ToolContext
from agent_repl.tools.bash import Bash, BashArgs
ctx = ToolContext(cwd=Path(sys.argv[1]), tool_results_dir=Path(sys.argv[1]) / "session" / "tool-results")
asyncio.run(Bash().run(BashArgs(command=sys.argv[2]), ctx))
"""


def test_no_background_process_keeps_writing_into_the_session_after_the_agent_is_killed(tmp_path):
    marker, tag = f"t13s-orphan-{os.getpid()}", f"t13s-shell-{os.getpid()}"
    # The quotes keep the marker itself out of the shell's own command line: only `yes` carries it.
    command = f"setsid bash -c 'exec -a t13s-orphan-\"{os.getpid()}\" yes' & echo started; sleep 30 # {tag}"
    agent = subprocess.Popen([sys.executable, "-c", CHILD_AGENT, str(tmp_path), command], cwd=REPO)
    try:
        deadline = time.monotonic() + 30
        while not _alive_with(marker):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        agent.send_signal(signal.SIGKILL)
        agent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while _alive_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)  # its next write has no reader: SIGPIPE
        assert _alive_with(marker) == []
        assert _processes_writing_under(tmp_path / "session") == []
    finally:
        for pid in _alive_with(marker) + _alive_with(tag):
            os.kill(pid, signal.SIGKILL)


# --- a NUL byte is a clean tool error -----------------------------------------------------------


async def test_a_nul_byte_in_a_command_is_a_clean_error_that_leaves_no_scratch_files(project, home):
    steps = [{"tools": [{"name": "Bash", "input": {"command": "echo before\u0000after"}}]}, {"text": "Ok."}]
    with EmulatorServer(policy=ScriptPolicy({"steps": steps})) as server:
        env = {"AGENT_REPL_HOME": str(home), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-t"}
        settings = load_settings(cwd=project, env=env, overrides={"skip_permissions": True})
        session = await open_session(settings, project)
        try:
            events = [e async for e in session.run_turn("run it")]
        finally:
            await close_session(session)
    [result] = [e for e in events if isinstance(e, ToolResultEvent)]
    block = result.message.tool_results()[0]
    assert block.is_error and "NUL byte" in block.text() and "unexpectedly" not in block.text()
    assert [e.reason for e in events if isinstance(e, TurnEnded)] == ["completed"]
    assert [p.name for p in home.rglob(".bash-*")] == []


# --- a full disk and a read-only home -----------------------------------------------------------


def _assert_one_clean_line(done: subprocess.CompletedProcess[str], expected: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert len(lines) == 1 and lines[0].startswith("agent-repl: ") and expected in lines[0], done.stderr


def _assert_history_intact(home: Path) -> list[dict[str, Any]]:
    [path] = transcript_files(home)
    data = path.read_bytes()
    assert data.endswith(b"\n"), "a torn last line"
    records = complete_records(data)
    assert len(records) == data.count(b"\n")
    assert load_session(path).warnings == []
    return records


def _limit_file_size(limit: int) -> Any:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.timeout(120)
def test_a_write_that_does_not_fit_is_one_line_and_leaves_no_torn_record(project, home):
    """The file size limit cuts a write short exactly as a full disk does (then EFBIG instead of ENOSPC)."""
    with EmulatorServer(policy=ScriptPolicy({"steps": [{"text": "Short answer."}, {"text": "Again."}]})) as server:
        env = agent_env(home, server)
        assert run_agent(["-p", "a first short prompt"], project, env).returncode == 0
        size = transcript_files(home)[0].stat().st_size
        big = "a long prompt " * 4_000  # about 56 KB: the write stops part way
        done = run_agent(["--continue", "-p", big], project, env, preexec_fn=_limit_file_size(size + 20_000))
        _assert_one_clean_line(done, "could not save the session to")
        assert "File too large" in done.stderr
        records = _assert_history_intact(home)
        assert transcript_files(home)[0].stat().st_size <= size + 20_000
        assert not any(big[:40] in json.dumps(r) for r in records)
        # With room again the session continues where it was.
        again = run_agent(["--continue", "-p", "go on"], project, env)
        assert again.returncode == 0 and again.stdout.strip() == "Again.", again.stderr
        _assert_history_intact(home)


def _mount_tmpfs(target: Path, size: str) -> bool:
    target.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None or os.geteuid() != 0:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)],
                          capture_output=True).returncode == 0  # fmt: skip


@pytest.mark.timeout(120)
def test_a_full_disk_is_one_line_and_keeps_the_history(project, tmp_path):
    home = tmp_path / "small-disk"
    if not _mount_tmpfs(home, "256k"):
        pytest.skip("needs a tmpfs mount (root); the file-size test covers the same path")
    try:
        with EmulatorServer(policy=ScriptPolicy({"steps": [{"text": "Short answer."}, {"text": "Again."}]})) as server:
            env = agent_env(home, server)
            assert run_agent(["-p", "a first short prompt"], project, env).returncode == 0
            free = shutil.disk_usage(home).free
            (home / "filler").write_bytes(b"\0" * max(0, free - 12_288))  # leave three pages
            done = run_agent(["--continue", "-p", "a long prompt " * 4_000], project, env)
            _assert_one_clean_line(done, "No space left on device")
            _assert_history_intact(home)
            (home / "filler").unlink()
            again = run_agent(["--continue", "-p", "go on"], project, env)
            assert again.returncode == 0 and again.stdout.strip() == "Again.", again.stderr
            _assert_history_intact(home)
    finally:
        subprocess.run(["umount", str(home)], check=False)


@pytest.mark.timeout(120)
def test_a_read_only_home_is_one_line_before_anything_runs(project, tmp_path):
    home = tmp_path / "read-only-home"
    if _mount_tmpfs(home, "1m"):
        remount = ["mount", "-o", "remount,ro", str(home)]
        undo: list[str] = ["umount", str(home)]
        assert subprocess.run(remount, capture_output=True).returncode == 0
    else:
        home.chmod(0o500)
        undo = ["chmod", "700", str(home)]
    try:
        with EmulatorServer(policy=ScriptPolicy({"steps": [{"text": "never"}]})) as server:
            done = run_agent(["-p", "hello"], project, agent_env(home, server))
            requests = server.recordings.messages
        _assert_one_clean_line(done, "cannot save the session in")
        assert requests == []  # nothing was sent that could not be kept
    finally:
        subprocess.run(undo, check=False)
