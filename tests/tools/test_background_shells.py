"""Bash's run_in_background, BashOutput and KillShell on real processes, and Ctrl+B's move."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_repl.core.tooling import background
from agent_repl.core.tooling.background import BackgroundShells
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, ToolPorts
from agent_repl.tools import bash as bash_module
from agent_repl.tools.bash import Bash
from agent_repl.tools.bash_output import BashOutput
from agent_repl.tools.kill_shell import KillShell

from .test_bash import eventually, pid_is_gone


@pytest.fixture
async def shells() -> AsyncIterator[BackgroundShells]:
    shells = BackgroundShells(kill_grace_seconds=0.5)
    yield shells
    await shells.close()  # nothing a failed test started outlives it


@pytest.fixture
def bg_ctx(ctx: ToolContext, shells: BackgroundShells) -> ToolContext:
    ctx.ports = ToolPorts(shells=shells)
    return ctx


async def call(tool: Tool, ctx: ToolContext, **raw: object) -> ToolOutput:
    args = tool.parse_args(raw)
    assert not isinstance(args, ToolOutput), args
    return await tool.run(args, ctx)


def text(out: ToolOutput) -> str:
    assert isinstance(out.content, str)
    return out.content


async def test_a_background_command_answers_at_once_and_its_output_is_read_once(
    bg_ctx: ToolContext, shells: BackgroundShells
) -> None:
    started = await call(Bash(), bg_ctx, command="echo one; sleep 0.3; echo two", run_in_background=True)
    assert not started.is_error and "Command running in background with ID: bash_1" in text(started)
    assert started.structured is not None and started.structured["backgroundTaskId"] == "bash_1"
    shell = shells.shells["bash_1"]
    assert await eventually(lambda: shell.status != "running")
    first = await call(BashOutput(), bg_ctx, bash_id="bash_1")
    assert "<status>completed</status>" in text(first) and "<exit_code>0</exit_code>" in text(first)
    assert "one\ntwo" in text(first)
    again = await call(BashOutput(), bg_ctx, bash_id="bash_1")
    assert "(no new output)" in text(again) and "one" not in text(again)
    # The model read how it ended: no notification is owed for it.
    assert shells.take_notifications() == []


async def test_new_output_only_and_the_filter_consumes_the_lines_it_hides(bg_ctx: ToolContext, shells: BackgroundShells) -> None:
    await call(Bash(), bg_ctx, command="printf 'ok 1\\nbad 2\\nok 3\\n'; sleep 30", run_in_background=True)
    shell = shells.shells["bash_1"]
    assert await eventually(lambda: shell.output_path.stat().st_size == 16)
    out = await call(BashOutput(), bg_ctx, bash_id="bash_1", filter="^ok")
    assert "<status>running</status>" in text(out)
    assert "ok 1\nok 3" in text(out) and "bad" not in text(out) and "1 lines did not match" in text(out)
    assert "(no new output)" in text(await call(BashOutput(), bg_ctx, bash_id="bash_1"))
    killed = await call(KillShell(), bg_ctx, shell_id="bash_1")
    assert not killed.is_error and "Killed background shell bash_1" in text(killed)


async def test_kill_shell_stops_the_whole_group(bg_ctx: ToolContext, shells: BackgroundShells, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    await call(Bash(), bg_ctx, command=f"sleep 60 & echo $! > {pid_file}; wait", run_in_background=True)
    assert await eventually(lambda: pid_file.exists() and pid_file.read_text().strip() != "")
    child = int(pid_file.read_text())
    out = await call(KillShell(), bg_ctx, shell_id="bash_1")
    assert not out.is_error
    shell = shells.shells["bash_1"]
    assert shell.status == "killed"
    assert await eventually(lambda: pid_is_gone(child))
    after = await call(BashOutput(), bg_ctx, bash_id="bash_1")
    assert "<status>killed</status>" in text(after)
    again = await call(KillShell(), bg_ctx, shell_id="bash_1")
    assert again.is_error and "is not running: it killed" in text(again)
    assert shells.take_notifications() == []  # the model killed it itself


async def test_a_shell_that_ends_on_its_own_is_announced_once(bg_ctx: ToolContext, shells: BackgroundShells) -> None:
    await call(Bash(), bg_ctx, command="exit 3", description="Fail on purpose", run_in_background=True)
    assert await eventually(lambda: shells.shells["bash_1"].status == "failed")
    notes = shells.take_notifications()
    assert len(notes) == 1
    assert "<task-id>bash_1</task-id>" in notes[0] and "<status>failed</status>" in notes[0]
    assert "Fail on purpose" in notes[0] and "exit code 3" in notes[0]
    assert shells.take_notifications() == []


async def test_unknown_ids_and_a_bad_filter_are_errors(bg_ctx: ToolContext) -> None:
    out = await call(BashOutput(), bg_ctx, bash_id="bash_9")
    assert out.is_error and "no background shell 'bash_9'. Known: none" in text(out)
    assert (await call(KillShell(), bg_ctx, shell_id="nope")).is_error
    await call(Bash(), bg_ctx, command="true", run_in_background=True)
    bad = await call(BashOutput(), bg_ctx, bash_id="bash_1", filter="(")
    assert bad.is_error and "not a valid regular expression" in text(bad)


async def test_without_background_shells_the_tools_say_so(ctx: ToolContext) -> None:
    out = await call(Bash(), ctx, command="echo hi", run_in_background=True)
    assert out.is_error and "not available" in text(out)
    assert (await call(BashOutput(), ctx, bash_id="bash_1")).is_error


async def test_ctrl_b_moves_the_running_foreground_command(bg_ctx: ToolContext, shells: BackgroundShells) -> None:
    assert shells.request_move() is False  # nothing runs in the foreground
    running = asyncio.ensure_future(call(Bash(progress_interval=0.05), bg_ctx, command="echo started; sleep 30"))
    assert await eventually(lambda: shells.foreground_running == 1)
    assert await eventually(lambda: b"started" in next(Path(bg_ctx.tool_results_dir).glob(".bash-*.out")).read_bytes())
    assert shells.request_move() is True
    out = await asyncio.wait_for(running, 5)
    assert not out.is_error and "The user moved this command to the background with ID: bash_1" in text(out)
    shell = shells.shells["bash_1"]
    assert shell.status == "running" and shells.foreground_running == 0
    assert "started" in text(await call(BashOutput(), bg_ctx, bash_id="bash_1"))
    await shells.close()
    assert shell.status == "killed" and pid_is_gone(shell.process.pid)


async def test_session_close_kills_every_running_shell(bg_ctx: ToolContext, shells: BackgroundShells) -> None:
    for _ in range(2):
        await call(Bash(), bg_ctx, command="sleep 60", run_in_background=True)
    pids = [s.process.pid for s in shells.shells.values()]
    await shells.close()
    assert [s.status for s in shells.shells.values()] == ["killed", "killed"]
    assert all(pid_is_gone(pid) for pid in pids)


async def test_output_is_bounded_on_disk_and_per_read(
    bg_ctx: ToolContext, shells: BackgroundShells, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bash_module, "MAX_OUTPUT_BYTES", 100_000)
    monkeypatch.setattr(background, "MAX_READ_BYTES", 10_000)
    await call(Bash(), bg_ctx, command="yes line | head -c 1000000", run_in_background=True)
    shell = shells.shells["bash_1"]
    assert await eventually(lambda: shell.status == "completed")
    assert shell.output_path.stat().st_size == 100_000
    out = await call(BashOutput(), bg_ctx, bash_id="bash_1")
    assert "90000 bytes of older output were skipped" in text(out) and str(shell.output_path) in text(out)
    assert len(text(out)) < 11_000
    assert re.search(r"(line\n){100}", text(out))


async def test_the_calls_show_the_shell_and_where_it_stands(bg_ctx: ToolContext, shells: BackgroundShells) -> None:
    await call(Bash(), bg_ctx, command="printf 'a\\nb\\n'", run_in_background=True)
    assert await eventually(lambda: shells.shells["bash_1"].status == "completed")
    out = await call(BashOutput(), bg_ctx, bash_id="bash_1")
    display = BashOutput.display
    assert display.headline("BashOutput", {"bash_id": "bash_1"}) == "BashOutput(bash_1)"
    assert display.summary({"bash_id": "bash_1"}, out.structured) == "completed (exit code 0): 2 new lines"
    assert KillShell.display.headline("KillShell", {"shell_id": "bash_1"}) == "KillShell(bash_1)"
