"""Adding a slash command the way agent_repl/commands/README.md says, with a toy one: a handler
that returns data, a `Command` entry in the registry, and both ways it runs (a front end through
the registry, and print mode)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from agent_repl import print_command
from agent_repl.commands import CommandContext, SessionHolder, default_registry
from agent_repl.commands.registry import Command, CommandRegistry
from agent_repl.commands.results import CommandResult, HelpReport, TextOutput
from agent_repl.core.api.client import ModelClient
from agent_repl.core.config.settings import Settings
from agent_repl.core.model.messages import UserMessage
from agent_repl.core.model.transcript_sink import MemorySink
from agent_repl.print_mode import run_print_mode
from agent_repl.session import Session
from agent_repl.ui.render import render_result


# Step 1: the handler, a typed callable that returns data and never draws.
async def count_command(ctx: CommandContext, args: str) -> CommandResult:
    role = args.strip() or "all"
    if role not in ("all", "user", "assistant"):
        return TextOutput(f"count what? {role!r} is not all, user or assistant", level="error")
    messages = [m for m in ctx.session.messages if role == "all" or getattr(m, "type", None) == role]
    where = "this session" if ctx.interactive else "this run"
    return TextOutput(f"{len(messages)} {role} messages in {where}")


# Step 3: its entry in the registry (a test adds it to a copy of the built-in list).
def registry_with_count() -> CommandRegistry:
    registry = default_registry()
    registry.register(Command("count", "count the history's messages", count_command, usage="[all|user|assistant]"))
    return registry


def _session(tmp_path: Path) -> Session:
    from agent_repl.bootstrap import build_pipeline
    from agent_repl.tools import builtin_tools

    settings = Settings(home=tmp_path / "home", api_key="x", base_url="http://127.0.0.1:9")
    tools = builtin_tools()
    history = [UserMessage(content="first"), UserMessage(content="second")]
    return Session(
        session_id="s-1",
        cwd=tmp_path,
        settings=settings,
        client=ModelClient(api_key="x", base_url="http://127.0.0.1:9", max_retries=0),
        tools=tools,
        projector=build_pipeline(settings, tmp_path, tools, tmp_path / "r"),
        sink=MemorySink(),
        tool_results_dir=tmp_path / "r",
        history=history,
    )


async def _no_switch(resume, previous):
    raise AssertionError("the toy command never switches sessions")


async def test_a_front_end_runs_the_toy_command_through_the_registry(tmp_path):
    registry = registry_with_count()
    ctx = CommandContext(SessionHolder(_session(tmp_path), _no_switch), registry)

    assert registry.complete("/cou") == ["/count"]
    assert await registry.run("/count user", ctx) == TextOutput("2 user messages in this session")
    refused = await registry.run("/count tools", ctx)
    assert refused == TextOutput("count what? 'tools' is not all, user or assistant", level="error")
    # /help lists it, and the shared renderer draws its result with no case of its own.
    help_report = await registry.run("/help", ctx)
    assert isinstance(help_report, HelpReport)
    assert any(c.name == "/count" and c.usage == "[all|user|assistant]" for c in help_report.commands)
    assert "2 user messages" in str(render_result(await registry.run("/count user", ctx)))


async def test_print_mode_runs_the_toy_command_instead_of_a_turn(tmp_path, monkeypatch):
    monkeypatch.setattr(print_command, "default_registry", registry_with_count)
    session = _session(tmp_path)

    out, err = io.StringIO(), io.StringIO()
    assert await run_print_mode(session, "/count", output_format="text", out=out, err=err) == 0
    assert out.getvalue() == "2 all messages in this run\n" and err.getvalue() == ""

    out = io.StringIO()
    assert await run_print_mode(session, "/count user", output_format="json", out=out, err=err) == 0
    result = json.loads(out.getvalue())
    assert result["result"] == "2 user messages in this run"
    assert result["local_command"] == "count" and result["num_turns"] == 0

    out, err = io.StringIO(), io.StringIO()
    assert await run_print_mode(session, "/count tools", output_format="text", out=out, err=err) == 1
    assert out.getvalue() == ""
    assert err.getvalue() == "agent-repl: count what? 'tools' is not all, user or assistant\n"
    # No model request was sent: the history is what it was.
    assert len(session.messages) == 2
