from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_repl.core.tooling.persisted_output import is_persisted_preview
from agent_repl.core.tooling.tool import ToolContext, ToolOutput
from agent_repl.tools.bash import Bash, BashArgs


def text_of(output: ToolOutput) -> str:
    assert isinstance(output.content, str), output.content
    return output.content


async def bash(ctx: ToolContext, tool: Bash | None = None, **raw: object) -> ToolOutput:
    tool = tool or Bash()
    args = tool.parse_args(raw)
    assert isinstance(args, BashArgs), args
    return await tool.run(args, ctx)


def pid_is_gone(pid: int) -> bool:
    """Gone or a zombie (a container's init may not reap orphans promptly)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


async def eventually(predicate: Callable[[], bool], seconds: float = 10) -> bool:
    for _ in range(int(seconds / 0.05)):
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return predicate()


def status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(field)


async def test_output_and_structured(ctx: ToolContext) -> None:
    out = await bash(ctx, command="echo hello; echo oops >&2", description="Say hello")
    assert not out.is_error
    assert text_of(out) == "hello\noops"
    assert out.structured == {
        "stdout": "hello\noops",
        "stderr": "",
        "interrupted": False,
        "isImage": False,
        "returnCode": 0,
        "outputMerged": True,
    }
    assert out.summary == "Say hello"


async def test_exit_code_is_reported(ctx: ToolContext) -> None:
    out = await bash(ctx, command="echo before; exit 3")
    assert out.is_error
    assert text_of(out) == "Exit code 3\nbefore"
    assert out.structured is not None and out.structured["returnCode"] == 3
    silent = await bash(ctx, command="false")
    assert text_of(silent) == "Exit code 1"


async def test_no_output(ctx: ToolContext) -> None:
    out = await bash(ctx, command="true")
    assert not out.is_error and text_of(out) == "(no output)"


async def test_cwd_persists_across_calls(ctx: ToolContext) -> None:
    (ctx.cwd / "sub" / "deeper").mkdir(parents=True)
    await bash(ctx, command="cd sub")
    assert ctx.state["cwd"] == str((ctx.cwd / "sub").resolve())
    out = await bash(ctx, command="pwd")
    assert text_of(out) == str((ctx.cwd / "sub").resolve())
    # `exit` and a failing command after `cd` still record the directory.
    await bash(ctx, command="cd deeper && exit 4")
    out = await bash(ctx, command="pwd")
    assert text_of(out).endswith("/sub/deeper")


async def test_removed_cwd_falls_back_to_session_cwd(ctx: ToolContext) -> None:
    gone = ctx.cwd / "gone"
    gone.mkdir()
    await bash(ctx, command="cd gone")
    gone.rmdir()
    out = await bash(ctx, command="pwd")
    assert text_of(out) == str(ctx.cwd)


@pytest.mark.timeout(20)
async def test_stdin_is_closed(ctx: ToolContext) -> None:
    out = await bash(ctx, command="cat; read line; echo done $?")
    assert text_of(out) == "done 1"


async def test_non_utf8_output_is_replaced(ctx: ToolContext) -> None:
    out = await bash(ctx, command=r"printf 'caf\xe9 \xff\xfe ok\n'")
    assert not out.is_error
    assert text_of(out) == "caf\ufffd \ufffd\ufffd ok"


@pytest.mark.timeout(30)
async def test_timeout_kills_the_group_and_its_children(ctx: ToolContext, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    # One child ignores SIGTERM, so the SIGKILL that follows the grace period is needed too.
    command = (
        f"sleep 1000 & echo $! >> {pids}; "
        f"(trap '' TERM; exec sleep 1000) & echo $! >> {pids}; "
        "echo started; sleep 1000"
    )
    tool = Bash(kill_grace_seconds=0.5)
    started = time.monotonic()
    out = await bash(ctx, tool, command=command, timeout=1000)
    assert time.monotonic() - started < 15
    assert out.is_error
    assert text_of(out).startswith("Command timed out after 1s")
    assert "started" in text_of(out)
    assert out.structured is not None
    assert out.structured["interrupted"] is True and out.structured["timedOut"] is True
    child_pids = [int(p) for p in pids.read_text().split()]
    assert len(child_pids) == 2
    assert await eventually(lambda: all(pid_is_gone(p) for p in child_pids))


@pytest.mark.timeout(30)
async def test_cancellation_kills_the_group(ctx: ToolContext, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    task = asyncio.create_task(bash(ctx, command=f"sleep 1000 & echo $! > {pid_file}; echo working; wait"))
    assert await eventually(lambda: pid_file.exists() and pid_file.read_text().strip() != "")
    ctx.cancelled.set()
    out = await asyncio.wait_for(task, 10)
    assert out.is_error
    assert "interrupted" in text_of(out) and "working" in text_of(out)
    assert out.structured is not None and out.structured["interrupted"] is True
    child = int(pid_file.read_text())
    assert await eventually(lambda: pid_is_gone(child))


@pytest.mark.timeout(30)
async def test_task_cancellation_kills_the_group(ctx: ToolContext, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    task = asyncio.create_task(bash(ctx, command=f"echo $$ > {pid_file}; sleep 1000"))
    assert await eventually(lambda: pid_file.exists() and pid_file.read_text().strip() != "")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    shell = int(pid_file.read_text())
    assert await eventually(lambda: pid_is_gone(shell))


async def test_large_output_is_persisted_with_a_preview(ctx: ToolContext) -> None:
    out = await bash(ctx, command="seq 1 200000")
    text = text_of(out)
    assert is_persisted_preview(text)
    saved = ctx.tool_results_dir / "toolu_test1.txt"
    assert f"Full output saved to: {saved}" in text
    assert saved.read_bytes() == b"".join(f"{i}\n".encode() for i in range(1, 200_001))
    assert text.count("\n") < 600
    assert out.structured is not None
    assert out.structured["stdout"] == text
    assert out.structured["persistedOutputPath"] == str(saved)
    assert out.structured["persistedOutputSize"] == saved.stat().st_size
    # No stray temporary files are left beside the result.
    assert sorted(p.name for p in ctx.tool_results_dir.iterdir()) == ["toolu_test1.txt"]


async def test_output_just_over_the_limit_in_multibyte_chars_stays_inline(ctx: ToolContext) -> None:
    # 20,000 chars of 2-byte UTF-8 is 40 KB: over 30,000 bytes but under 30,000 chars.
    out = await bash(ctx, command="python3 -c \"print('é' * 20000)\"")
    assert text_of(out) == "é" * 20_000


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_200_mb_output_keeps_memory_flat(ctx: ToolContext) -> None:
    reset = Path("/proc/self/clear_refs")
    try:
        reset.write_text("5")  # reset VmHWM so it measures this test's peak only
    except OSError:
        pass
    before = status_kb("VmRSS")
    out = await bash(ctx, command="yes | head -c 200000000")
    peak = status_kb("VmHWM")
    growth_mb = (peak - before) / 1024
    print(f"RSS before {before / 1024:.1f} MB, peak {peak / 1024:.1f} MB, growth {growth_mb:.1f} MB")
    assert is_persisted_preview(text_of(out))
    assert (ctx.tool_results_dir / "toolu_test1.txt").stat().st_size == 200_000_000
    assert growth_mb < 50


async def test_progress_callback_gets_the_tail(ctx: ToolContext) -> None:
    seen: list[str] = []

    async def on_progress(text: str) -> None:
        seen.append(text)

    ctx.on_progress = on_progress
    tool = Bash(progress_interval=0.05)
    out = await bash(ctx, tool, command="for i in 1 2 3 4 5; do echo tick $i; sleep 0.1; done")
    assert text_of(out).endswith("tick 5")
    assert seen and all(s.startswith("tick") for s in seen)
    sync_seen: list[str] = []
    ctx.on_progress = sync_seen.append
    await bash(ctx, tool, command="echo a; sleep 0.3; echo b")
    assert sync_seen


def test_the_permission_request_is_the_command_where_bash_stands(ctx: ToolContext, tmp_path: Path) -> None:
    tool = Bash()
    args = tool.parse_args({"command": "git status"})
    assert isinstance(args, BashArgs)
    ctx.state["cwd"] = str(tmp_path)
    request = tool.permission_request(args, ctx)
    assert (request.tool_name, request.key, request.cwd) == ("Bash", "git status", tmp_path)


def test_timeout_above_the_maximum_is_an_input_error() -> None:
    out = Bash().parse_args({"command": "true", "timeout": 600_001})
    assert isinstance(out, ToolOutput) and out.is_error
    assert "timeout" in text_of(out)


async def test_already_cancelled_turn_does_not_run(ctx: ToolContext, tmp_path: Path) -> None:
    ctx.cancelled.set()
    marker = tmp_path / "ran"
    out = await bash(ctx, command=f"touch {marker}")
    assert out.is_error and not marker.exists()
    assert os.listdir(ctx.tool_results_dir) == [] if ctx.tool_results_dir.exists() else True


async def test_command_deleting_its_output_file_is_an_error_value(ctx: ToolContext) -> None:
    out = await bash(ctx, command=f"echo hi; rm -f {ctx.tool_results_dir}/.bash-*.out; sleep 0.3")
    assert out.is_error and "could not be collected" in text_of(out)
