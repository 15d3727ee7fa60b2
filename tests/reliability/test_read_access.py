"""Reads outside the project ask first; process memory and environments are never read.

Read, Grep and Glob run unasked inside the working directory and any --add-dir folder; outside
they ask (print mode: denied unless a rule allows). `/proc/<pid>/environ`, `mem` and the like,
and anything under `/proc/<pid>/` of the agent or its ancestors, are refused whatever the rules,
`--dangerously-skip-permissions` included, decided on every path the name resolves through.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from agent_repl.core.loop.tool_execution import ToolCallOutcome, ToolRuntime, execute_tool_calls
from agent_repl.core.model.messages import ToolUseBlock
from agent_repl.core.permissions.read_access import protected_pids, refusal
from agent_repl.core.permissions.rules import Decision, PermissionPolicy, PermissionRequest
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.tools import builtin_tools

from .support import result_text

KEY = "sk-ant-api03-read-access-" + "k" * 40


class Asker:
    def __init__(self, answer: Decision = Decision.DENY) -> None:
        self.answer = answer
        self.requests: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Decision:
        self.requests.append(request)
        return self.answer


def runtime(project: Path, ask: Any, *, allow=(), deny=(), skip=False, add_dirs=()) -> ToolRuntime:
    policy = PermissionPolicy.from_rules(allow, deny, skip_all=skip, roots=[project, *add_dirs])
    return ToolRuntime(tools={t.name: t for t in builtin_tools()}, cwd=project, tool_results_dir=project.parent / "r",
                       permissions=policy, ask=ask, state={})  # fmt: skip


async def call(rt: ToolRuntime, name: str, **tool_input: Any) -> ToolCallOutcome:
    use = ToolUseBlock(id=f"toolu_{name}", name=name, input=tool_input)
    return [o async for o in execute_tool_calls(rt, [use], asyncio.Event()) if isinstance(o, ToolCallOutcome)][0]


def text(outcome: ToolCallOutcome) -> str:
    return result_text(outcome.output.content)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "notes.txt").write_text("outside notes\n")
    return folder


# --- outside the project ------------------------------------------------------------------------


@pytest.mark.parametrize("tool, args", [
    ("Read", lambda d: {"file_path": str(d / "notes.txt")}),
    ("Grep", lambda d: {"pattern": "notes", "path": str(d)}),
    ("Glob", lambda d: {"pattern": "*.txt", "path": str(d)}),
    ("Glob", lambda d: {"pattern": f"{d}/*.txt"}),
])  # fmt: skip
async def test_a_read_outside_the_project_asks_and_a_no_reads_nothing(project, outside, tool, args):
    asker = Asker(Decision.DENY)
    outcome = await call(runtime(project, asker), tool, **args(outside))
    assert [r.tool_name for r in asker.requests] == [tool]
    assert asker.requests[0].reads and Path(asker.requests[0].key).resolve() == outside.resolve() / (
        "notes.txt" if tool == "Read" else "")
    assert outcome.output.is_error and "denied" in text(outcome) and "outside notes" not in text(outcome)


async def test_yes_reads_it_and_always_saves_a_rule_for_that_path(project, outside):
    asker = Asker(Decision.ALLOW_ALWAYS)
    rt = runtime(project, asker)
    target = outside / "notes.txt"
    assert "outside notes" in text(await call(rt, "Read", file_path=str(target)))
    assert asker.requests[0].always_rules == (f"Read(/{target.resolve()})",)
    assert "outside notes" in text(await call(rt, "Read", file_path=str(target)))
    assert len(asker.requests) == 1  # the saved rule decides the second read


async def test_inside_the_project_and_add_dir_folders_nothing_is_asked(project, outside):
    asker = Asker()
    rt = runtime(project, asker, add_dirs=[outside])
    assert "Demo project" in text(await call(rt, "Read", file_path=str(project / "README.md")))
    assert "TODO" in text(await call(rt, "Grep", pattern="TODO", output_mode="content"))
    assert "outside notes" in text(await call(rt, "Read", file_path=str(outside / "notes.txt")))
    assert asker.requests == []


async def test_with_nobody_to_ask_a_read_outside_is_denied_unless_a_rule_allows_it(project, outside):
    denied = await call(runtime(project, None), "Read", file_path=str(outside / "notes.txt"))
    assert denied.output.is_error and "outside the project" in text(denied)
    ruled = runtime(project, None, allow=[f"Read(/{outside}/**)"])
    assert "outside notes" in text(await call(ruled, "Read", file_path=str(outside / "notes.txt")))
    assert "notes.txt" in text(await call(ruled, "Glob", pattern="*.txt", path=str(outside)))


async def test_a_deny_rule_for_reads_holds_inside_the_project_too(project):
    (project / ".env").write_text("SECRET=1\n")
    rt = runtime(project, Asker(Decision.ALLOW_ONCE), allow=["Read"], deny=["Read(./.env)"], skip=True)
    outcome = await call(rt, "Read", file_path=str(project / ".env"))
    assert outcome.output.is_error and "SECRET" not in text(outcome) and "Read(./.env)" in text(outcome)


async def test_a_secret_in_the_home_directory_is_outside_so_it_asks(project, tmp_path, monkeypatch):
    home = tmp_path / "user-home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nfake\n")
    monkeypatch.setenv("HOME", str(home))
    asker = Asker(Decision.DENY)
    outcome = await call(runtime(project, asker), "Read", file_path=os.path.expanduser("~/.ssh/id_rsa"))
    assert len(asker.requests) == 1 and outcome.output.is_error and "PRIVATE KEY" not in text(outcome)


# --- /proc: refused outright ---------------------------------------------------------------------


def proc_paths(project: Path) -> list[str]:
    pid, ppid, tid = os.getpid(), os.getppid(), threading.get_native_id()
    link = project / "innocent.txt"
    link.symlink_to("/proc/self/environ")
    (project / "procdir").symlink_to("/proc/self")
    return [
        "/proc/self/environ", "/proc/thread-self/environ", f"/proc/{pid}/environ", f"/proc/{ppid}/environ",
        f"/proc/{pid}/task/{tid}/environ", "/proc/self/mem", "/proc/self/cmdline", "/proc/self/status",
        f"/proc/{ppid}/status", "/proc/self/../self/environ", "/proc/self/./environ", "/proc/1/environ",
        str(link), str(project / "procdir" / "status"), str(project / "procdir" / ".." / "self" / "environ"),
        "/proc/self/cwd/README.md", "/proc/self/root/etc/hostname", "/proc/kcore",
    ]  # fmt: skip


async def test_process_files_are_refused_by_every_tool_whatever_the_rules(project):
    asker = Asker(Decision.ALLOW_ONCE)
    rt = runtime(project, asker, allow=["Read", "Grep", "Glob"], skip=True)
    for path in proc_paths(project):
        for name, args in (("Read", {"file_path": path}), ("Grep", {"pattern": "ANTHROPIC", "path": path}),
                           ("Glob", {"pattern": "*", "path": path})):  # fmt: skip
            outcome = await call(rt, name, **args)
            assert outcome.output.is_error and "refused" in text(outcome), (name, path, text(outcome)[:200])
            assert "ANTHROPIC" not in text(outcome) and "PATH=" not in text(outcome)
    assert asker.requests == []


def test_another_processes_status_is_only_outside_but_its_environment_is_refused():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid not in protected_pids()
        assert refusal(f"/proc/{child.pid}/status") is None
        assert refusal(f"/proc/{child.pid}/environ") is not None
        assert refusal(f"/proc/{child.pid}/mem") is not None
    finally:
        child.kill()
        child.wait()


async def test_grep_over_the_whole_filesystem_is_refused_even_when_allowed(project):
    rt = runtime(project, Asker(Decision.ALLOW_ONCE), allow=["Grep"])
    for root in ("/", "/proc", "/proc/1"):
        outcome = await call(rt, "Grep", pattern="ANTHROPIC_API_KEY", path=root)
        assert outcome.output.is_error and "refused" in text(outcome), root


async def test_read_checks_the_file_it_opened_not_only_the_name(project):
    """A link swapped between the permission check and the open still lands on a refusal."""
    from agent_repl.core.tooling.tool import ToolContext
    from agent_repl.tools.read import Read, ReadArgs

    ctx = ToolContext(cwd=project, tool_results_dir=project / "r")
    out = await Read().run(ReadArgs(file_path="/proc/self/environ"), ctx)
    assert out.is_error and "refused" in result_text(out.content)


# --- end to end: print mode with a key in the environment -----------------------------------------


@pytest.mark.timeout(180)
def test_print_mode_never_hands_the_agents_environment_to_the_model(project, home, tmp_path):
    probes = [
        {"name": "Grep", "input": {"pattern": "ANTHROPIC_API_KEY=sk", "path": "/proc/self/environ"}},
        {"name": "Read", "input": {"file_path": "/proc/self/environ"}},
        {"name": "Grep", "input": {"pattern": "sk-ant", "path": "/proc/self", "output_mode": "content"}},
        {"name": "Read", "input": {"file_path": str(tmp_path / "elsewhere.txt")}},
    ]
    (tmp_path / "elsewhere.txt").write_text("not for print mode\n")
    server = EmulatorServer(policy=ScriptPolicy({"steps": [{"tools": probes}, {"text": "done"}]}))
    server.start()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY=KEY, AGENT_REPL_HOME=str(home))
    try:
        done = subprocess.run([sys.executable, "-m", "agent_repl", "-p", "look"], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip
        bodies = [e.body for e in server.recordings.messages if e.status == 200]
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    wire = json.dumps(bodies[-1])
    results = [b for m in bodies[-1]["messages"] if m["role"] == "user" for b in m["content"]
               if isinstance(b, dict) and b.get("type") == "tool_result"]  # fmt: skip
    assert [r.get("is_error") for r in results] == [True] * 4
    assert "refused" in result_text(results[0]["content"]) and "outside the project" in result_text(results[3]["content"])
    assert KEY not in wire and KEY[20:] not in wire and "not for print mode" not in wire
    on_disk = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert KEY.encode() not in on_disk
