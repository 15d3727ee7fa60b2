"""Hostile tool input, through the real loop with a scripted model.

The tools' own edge cases (a FIFO, /dev/zero, a binary file, a symlink loop, a catastrophic
regex, stdin, a timeout that must kill children) are unit-tested in tests/tools; here they run
end to end in one session, with what those tests lack: tool_use ids that try to escape the
tool-results directory (or collide once made safe), a 10 GB sparse file, 300 MB of output, and
commands whose children outlive them. Every call must come back as a clear result, the turn must
finish, the process's memory must stay bounded, and nothing may be written outside the session.
"""

from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.api.model_catalog import cache_file
from agent_repl.core.config.settings import load_settings
from agent_repl.core.model.events import ToolResultEvent, ToolUseStarted, TurnEnded
from agent_repl.core.tooling.persisted_output import tool_result_path
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.base import PolicyRequest, Reply, text_block, tool_use_block
from agent_repl.emulator.server import EmulatorServer

from .support import complete_records, files_under, persisted_results, result_text, transcript_files


def settings_for(server: EmulatorServer, home: Path, cwd: Path) -> Any:
    env = {"AGENT_REPL_HOME": str(home), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-test-hostile"}
    return load_settings(cwd=cwd, env=env, overrides={"skip_permissions": True})


async def run_turn(server: EmulatorServer, home: Path, project: Path, prompt: str) -> tuple[list[Any], Any]:
    session = await open_session(settings_for(server, home, project), project)
    try:
        events = [e async for e in session.run_turn(prompt)]
    finally:
        await close_session(session)
    return events, session


@pytest.mark.timeout(120)
async def test_tool_use_ids_with_separators_or_dots_never_write_outside_the_session(tmp_path, project, home):
    tag = uuid.uuid4().hex[:12]
    ids = [
        f"../../../../escape-{tag}",
        f"/tmp/absolute-{tag}",
        "a/b",
        "a_b",  # the safe form of "a/b": the two must not share a file
        "..",
        "",
        "toolu_" + "x" * 300,
        "toolu_" + "x" * 300 + "y",  # the same first 128 characters
        "nul\x00byte",
    ]
    calls = [(tool_id, f"seq {i} {30_000 + i}") for i, tool_id in enumerate(ids)]

    def answer(request: PolicyRequest) -> Reply:
        # The first reply asks for every call; the API would refuse the ids in the next request.
        return Reply([text_block("Running.")] + [tool_use_block(i, "Bash", {"command": c}) for i, c in calls], "tool_use")

    before = set(files_under(tmp_path))
    server = EmulatorServer(policy=answer)
    server.start()
    try:
        events, session = await run_turn(server, home, project, "go")
    finally:
        server.stop()

    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert [r.tool_use_id for r in results] == ids
    tool_results = session.tool_results_dir.resolve()
    new_files = set(files_under(tmp_path)) - before
    # Beside the session's directory: only its transcript and its lock, and the home's cache of the
    # endpoint's models (named by the endpoint, not by anything the model sent).
    models_cache = cache_file(home, server.base_url).resolve()
    outside = [
        p
        for p in new_files
        if tool_results not in p.resolve().parents and p.suffix not in (".jsonl", ".lock") and p.resolve() != models_cache
    ]
    assert outside == []
    assert not list(Path("/tmp").glob(f"*{tag}*")) and not list(tmp_path.parent.glob(f"*{tag}*"))
    # Each persisted output is in its own file, holding exactly that command's output.
    [transcript] = transcript_files(home)
    persisted = persisted_results(complete_records(transcript.read_bytes()))
    assert len(persisted) == len(ids)
    assert len({path for _, path, _ in persisted}) == len(ids)
    commands = dict(calls)
    for tool_use_id, path, _ in persisted:
        assert path.resolve().parent == tool_results
        first, last = commands[tool_use_id].split()[1:]
        assert path.read_text() == "".join(f"{n}\n" for n in range(int(first), int(last) + 1))
    # The next request carries ids the API refuses: the turn ends with one clear error, not a crash.
    [ended] = [e for e in events if isinstance(e, TurnEnded)]
    assert ended.reason == "error"


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=200), min_size=2, max_size=6, unique=True))
def test_any_ids_map_to_distinct_files_inside_the_directory(ids):
    directory = Path("/srv/session/tool-results")
    paths = [tool_result_path(directory, tool_id) for tool_id in ids]
    assert all(path.parent == directory for path in paths)
    assert len(set(paths)) == len(ids)


def vm_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(field)


def pid_gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state == "Z"


@pytest.mark.timeout(300)
async def test_hostile_files_and_commands_through_the_loop_stay_bounded(tmp_path, project, home, figures):
    work = project
    (work / "loop").mkdir()
    os.symlink(work, work / "loop" / "back")
    os.symlink("self", work / "self")
    os.mkfifo(work / "pipe")
    (work / "blob.bin").write_bytes(bytes(range(256)) * 64)
    sparse = work / "sparse.log"
    with sparse.open("wb") as f:
        f.write(b"a readable first line\n" * 400)  # past the binary sniff: read as text
        f.truncate(10 * 1024**3)  # 10 GB, almost all of it a hole
    (work / "long.txt").write_text("a" * 100_000 + "!\n")
    outlived, detached = work / "outlived.pid", work / "detached.pid"

    read = [{"name": "Read", "input": {"file_path": str(p)}}
            for p in ("/dev/zero", work / "pipe", sparse, work / "blob.bin")]  # fmt: skip
    search = [
        {"name": "Glob", "input": {"pattern": "**/*", "path": str(work)}},
        {"name": "Grep", "input": {"pattern": "(a+)+$", "path": str(work / "long.txt"), "output_mode": "count"}},
        {"name": "Grep", "input": {"pattern": "(((a{100}){100}){100}){100}", "path": str(work / "long.txt")}},
    ]
    bash = [
        "yes | head -c 300000000",
        "cat; read line; echo read-status=$?",
        f"sleep 120 & echo $! > {outlived}; echo started",
        f"(sleep 120 > /dev/null 2>&1 & echo $! > {detached}); echo detached",
    ]
    steps = [
        {"tools": read + search},
        *({"tools": [{"name": "Bash", "input": {"command": c}}]} for c in bash),
        {"text": "Survived."},
    ]
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps}))
    server.start()
    try:
        Path("/proc/self/clear_refs").write_text("5")  # measure this turn's peak only
    except OSError:
        pass
    before_kb = vm_kb("VmRSS")
    try:
        events, session = await run_turn(server, home, work, "do the dangerous things")
    finally:
        server.stop()
        detached_alive = detached.exists() and not pid_gone(int(detached.read_text()))
        if detached_alive:
            os.kill(int(detached.read_text()), signal.SIGKILL)
    growth_mb = (vm_kb("VmHWM") - before_kb) / 1024

    [ended] = [e for e in events if isinstance(e, TurnEnded)]
    assert ended.reason == "completed" and ended.final_text == "Survived."
    # Read-only calls run together and finish in any order: put the results in call order.
    by_id = {e.tool_use_id: e for e in events if isinstance(e, ToolResultEvent)}
    results = [by_id[e.tool_use_id] for e in events if isinstance(e, ToolUseStarted)]
    texts = [result_text(e.message.tool_results()[0].model_dump()["content"]) for e in results]
    errors = [e.is_error for e in results]
    dev_zero, fifo, big, blob, glob, catastrophic, huge_regex, flood, stdin, child, grandchild = texts
    assert errors[:4] == [True, True, False, True]
    assert "character device" in dev_zero and "FIFO" in fifo and "binary" in blob
    assert "1\ta readable first line" in big and "lines" in big
    assert "self" not in glob.split("\n") and not errors[4]
    assert not errors[5] and catastrophic == "No matches found"  # linear time: ripgrep does not backtrack
    assert errors[6] and "Grep failed" in huge_regex
    assert flood.startswith("<persisted-output>") and "Output too large (286.1 MB)" in flood
    assert stdin == "read-status=1"
    assert child.startswith("started") and "Stopped 1 background process" in child
    assert pid_gone(int(outlived.read_text()))
    assert grandchild == "detached" and detached_alive  # its output was redirected: it keeps running
    # The 300 MB went to a file, not through memory (the emulator and the SDK share this process).
    assert growth_mb < 150, f"the process grew by {growth_mb:.0f} MB"
    figures.update(tool_calls=len(results), peak_rss_growth_mb=round(growth_mb, 1))
