"""A background command runs in the same OS sandbox as a foreground one, and /add-dir widens it."""

from __future__ import annotations

import asyncio

from agent_repl.core.tooling.background import BackgroundShells
from agent_repl.core.tooling.tool import ToolContext, ToolPorts
from agent_repl.tools.bash import Bash, BashArgs
from agent_repl.tools.bash_output import BashOutput, BashOutputArgs

from .conftest import Layout, make_sandbox, needs_landlock

pytestmark = needs_landlock


async def _background(layout: Layout, command: str, sandbox=None) -> str:
    shells = BackgroundShells(kill_grace_seconds=0.5)
    ctx = ToolContext(
        cwd=layout.project,
        tool_results_dir=layout.agent_home / "projects" / "s" / "tool-results",
        sandbox=sandbox or make_sandbox(layout),
        ports=ToolPorts(shells=shells),
    )
    args = Bash().parse_args({"command": command, "run_in_background": True})
    assert isinstance(args, BashArgs)
    started = await Bash().run(args, ctx)
    assert not started.is_error, started.content
    shell = shells.shells["bash_1"]
    for _ in range(200):
        if shell.status != "running":
            break
        await asyncio.sleep(0.05)
    read = BashOutput().parse_args({"bash_id": "bash_1"})
    assert isinstance(read, BashOutputArgs)
    out = await BashOutput().run(read, ctx)
    await shells.close()
    assert isinstance(out.content, str)
    return out.content


async def test_a_background_write_outside_the_project_is_blocked(layout: Layout) -> None:
    text = await _background(layout, f"echo x > {layout.outside}/f")
    assert "<status>failed</status>" in text and not (layout.outside / "f").exists()


async def test_an_added_directory_becomes_writable(layout: Layout) -> None:
    sandbox = make_sandbox(layout)
    sandbox.add_write_root(layout.outside.resolve())
    text = await _background(layout, f"echo x > {layout.outside}/f", sandbox)
    assert "<status>completed</status>" in text and (layout.outside / "f").read_text() == "x\n"
