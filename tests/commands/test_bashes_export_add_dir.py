"""/bashes, /export and /add-dir through the registry as a front end runs them."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from agent_repl.commands import CommandContext, SessionHolder, default_registry
from agent_repl.commands.results import ClipboardExport, TextOutput
from agent_repl.core.api.client import ModelClient
from agent_repl.core.config.settings import Settings
from agent_repl.core.model.messages import (
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from agent_repl.core.model.transcript_sink import MemorySink
from agent_repl.core.permissions.rules import Decision, PermissionRequest
from agent_repl.core.tooling.tool import ToolContext
from agent_repl.session import Session
from agent_repl.tools.bash import Bash, BashArgs
from agent_repl.ui.clipboard import deliver_export, terminal_offers_clipboard


def _context(tmp_path: Path, *, interactive: bool = True) -> CommandContext:
    from agent_repl.bootstrap import build_pipeline
    from agent_repl.tools import builtin_tools

    settings = Settings(home=tmp_path / "home", api_key="sk-ant-test-key", base_url="http://127.0.0.1:9")
    project = tmp_path / "project"
    project.mkdir(parents=True, exist_ok=True)
    tools = builtin_tools()
    session = Session(
        session_id="s1234567-aaaa",
        cwd=project,
        settings=settings,
        client=ModelClient(api_key="x", base_url="http://127.0.0.1:9", max_retries=0),
        tools=tools,
        projector=build_pipeline(settings, project, tools, tmp_path / "r"),
        sink=MemorySink(),
        tool_results_dir=tmp_path / "r",
        clock=lambda: datetime(2026, 12, 5, 6, 7, 8, tzinfo=UTC),
    )

    async def never(resume, previous):
        raise AssertionError("no session switch here")

    return CommandContext(SessionHolder(session, never), default_registry(), interactive=interactive)


async def _run(ctx: CommandContext, line: str):
    assert ctx.registry is not None
    return await ctx.registry.run(line, ctx)


async def _start(ctx: CommandContext, command: str) -> None:
    session = ctx.session
    tool_ctx = ToolContext(cwd=session.cwd, tool_results_dir=session.tool_results_dir, ports=session.tool_ports)
    args = Bash().parse_args({"command": command, "run_in_background": True})
    assert isinstance(args, BashArgs)
    await Bash().run(args, tool_ctx)


async def test_bashes_lists_and_kills_and_the_model_hears_of_the_kill_once(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    empty = await _run(ctx, "/bashes")
    assert isinstance(empty, TextOutput) and "No background commands" in empty.text
    await _start(ctx, "exit 2")
    await _start(ctx, "sleep 60")
    shells = ctx.session.shells
    for _ in range(200):
        if shells.shells["bash_1"].status != "running":
            break
        await asyncio.sleep(0.05)
    listing = await _run(ctx, "/bashes")
    assert isinstance(listing, TextOutput)
    assert listing.text.splitlines()[1:] == [
        "  bash_1  [failed, exit code 2]  exit 2",
        "  bash_2  [running]  sleep 60",
    ]
    killed = await _run(ctx, "/bashes kill bash_2")
    assert isinstance(killed, TextOutput) and killed.level == "info" and "killed bash_2" in killed.text
    again = await _run(ctx, "/bashes kill bash_2")
    assert isinstance(again, TextOutput) and again.level == "error"
    assert (await _run(ctx, "/bashes stop")).level == "error"  # type: ignore[union-attr]
    notes = ctx.session.take_task_notifications()
    assert len(notes) == 2 and "was killed by the user" in notes[1]
    assert ctx.session.take_task_notifications() == []
    await shells.close()


def _conversation() -> list:
    return [
        UserMessage(content="<system-reminder>context</system-reminder>", is_meta=True),
        UserMessage(content="list the files"),
        AssistantMessage(message_id="m1", content=[TextBlock(text="Listing them.")]),
        AssistantMessage(message_id="m1", content=[ToolUseBlock(id="t1", name="Bash", input={"command": "ls"})]),
        UserMessage(content=[ToolResultBlock(tool_use_id="t1", content="a.py\n```weird```")]),
        AssistantMessage(message_id="m2", content=[TextBlock(text="There is **a.py**.")]),
    ]


async def test_export_to_a_file_writes_markdown_of_the_session(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    ctx.session.messages.extend(_conversation())
    result = await _run(ctx, "/export notes/chat.md")
    path = ctx.session.cwd / "notes" / "chat.md"
    assert isinstance(result, TextOutput) and result.level == "info" and f"wrote {path}" in result.text
    text = path.read_text()
    assert text.startswith("# Conversation s1234567 in ")
    assert "*Exported 2026-12-05 06:07*" in text
    assert "system-reminder" not in text
    assert "## User\n\nlist the files" in text
    assert "## Assistant\n\nListing them.\n\n**Bash**\n\n```json\n{\n  \"command\": \"ls\"\n}\n```" in text
    assert "Result:\n\n````\na.py\n```weird```\n````" in text  # the fence outgrows the backticks inside
    assert text.count("## Assistant") == 2
    replaced = await _run(ctx, "/export notes/chat.md")
    assert isinstance(replaced, TextOutput) and "replaced" in replaced.text
    directory = await _run(ctx, "/export notes")
    assert isinstance(directory, TextOutput) and directory.level == "error"


async def test_export_without_a_file_copies_where_it_can_else_writes_a_named_file(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    ctx.session.messages.extend(_conversation())
    result = await _run(ctx, "/export")
    assert isinstance(result, ClipboardExport)
    assert result.fallback == ctx.session.cwd / "conversation-2026-12-05-060708-s1234567.md"
    copied: list[str] = []
    assert deliver_export(result, copied.append, offered=True) is result and copied == [result.markdown]
    written = deliver_export(result, copied.append, offered=False)
    assert isinstance(written, TextOutput) and result.fallback.read_text() == result.markdown
    # Print mode has no clipboard: the named file straight away.
    headless = await _run(_context(tmp_path / "p", interactive=False), "/export")
    assert isinstance(headless, TextOutput) and "conversation-2026-12-05-060708-s1234567.md" in headless.text


def test_osc52_is_offered_by_real_terminals_only() -> None:
    assert terminal_offers_clipboard({"TERM": "xterm-256color"}, is_tty=True)
    assert not terminal_offers_clipboard({"TERM": "linux"}, is_tty=True)
    assert not terminal_offers_clipboard({"TERM": "xterm"}, is_tty=False)


async def test_add_dir_widens_reads_edits_and_the_sandbox(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    session = ctx.session
    request = PermissionRequest("Read", str(other / "f.py"), reads=True, cwd=session.cwd)
    assert session.permissions.check(request) is None  # a read outside the project is asked
    result = await _run(ctx, f"/add-dir {other}")
    assert isinstance(result, TextOutput) and result.level == "info" and str(other) in result.text
    assert other in session.permissions.roots and other in session.sandbox.policy.write_roots
    assert other in session.settings.add_dirs
    assert session.permissions.check(request) == Decision.ALLOW_ONCE  # now as inside the project
    missing = await _run(ctx, "/add-dir nowhere")
    assert isinstance(missing, TextOutput) and missing.level == "error" and "does not exist" in missing.text
    (tmp_path / "file").write_text("x")
    not_dir = await _run(ctx, f"/add-dir {tmp_path / 'file'}")
    assert isinstance(not_dir, TextOutput) and "is not a directory" in not_dir.text
    assert (await _run(ctx, "/add-dir")).level == "error"  # type: ignore[union-attr]
