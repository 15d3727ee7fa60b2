"""The command registry and the "always allow" file, without any UI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_repl.commands import CommandContext, SessionHolder, default_registry
from agent_repl.commands.allow_rules import AllowRuleError, persist_allow_rule
from agent_repl.commands.builtin import parse_snip_range
from agent_repl.commands.registry import parse_command_line
from agent_repl.commands.results import CostReport, ExitRequest, HelpReport, SessionSwitched, TextOutput
from agent_repl.core.api.client import ModelClient
from agent_repl.core.config.settings import Settings
from agent_repl.core.model.messages import UserMessage
from agent_repl.core.model.transcript_sink import MemorySink
from agent_repl.session import Session


def test_command_lines_parse_and_paths_are_not_commands():
    assert parse_command_line("/snip  abc..def ") == ("snip", "abc..def")
    assert parse_command_line("/HELP") == ("help", "")
    assert parse_command_line("/etc/passwd is a file") is None
    assert parse_command_line("hello /help") is None
    assert parse_command_line("/") is None


def test_completion_and_aliases():
    registry = default_registry()
    assert registry.complete("/co") == ["/context", "/compact", "/cost", "/config"]
    assert registry.get("quit").name == "exit" and registry.get("/?").name == "help"
    assert registry.get("nope") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("abc123", ("abc123", None)),
        ("abc..def", ("abc..def".split("..")[0], "def")),
        ("[id:abc123]", ("[id:abc123]", None)),
        ("", None),
        ("abc..", None),
        ("a b", None),
    ],
)
def test_snip_ranges(text, expected):
    assert parse_snip_range(text) == expected


def _session(tmp_path: Path, messages=None) -> Session:
    from agent_repl.bootstrap import build_pipeline
    from agent_repl.tools import builtin_tools

    settings = Settings(home=tmp_path / "home", api_key="x", base_url="http://127.0.0.1:9")
    tools = builtin_tools()
    return Session(
        session_id="s-1",
        cwd=tmp_path,
        settings=settings,
        client=ModelClient(api_key="x", base_url="http://127.0.0.1:9", max_retries=0),
        tools=tools,
        projector=build_pipeline(settings, tmp_path, tools, tmp_path / "r"),
        sink=MemorySink(),
        tool_results_dir=tmp_path / "r",
        history=messages or [],
    )


async def test_commands_return_data(tmp_path):
    opened: list = []

    async def opener(resume, previous):
        opened.append((resume, previous.session_id))
        new = _session(tmp_path)
        new.session_id = "s-2"
        return new

    registry = default_registry()
    ctx = CommandContext(SessionHolder(_session(tmp_path, [UserMessage(content="hi")]), opener), registry)
    assert isinstance(await registry.run("/help", ctx), HelpReport)
    assert isinstance(await registry.run("/cost", ctx), CostReport)
    assert isinstance(await registry.run("/exit", ctx), ExitRequest)
    unknown = await registry.run("/frobnicate", ctx)
    assert isinstance(unknown, TextOutput) and unknown.level == "error"
    switched = await registry.run("/clear", ctx)
    assert isinstance(switched, SessionSwitched)
    assert (switched.previous_id, switched.session_id, switched.previous_path) == ("s-1", "s-2", "")
    assert opened == [(None, "s-1")] and ctx.session.session_id == "s-2"
    missing = await registry.run("/resume no-such-session", ctx)
    assert isinstance(missing, TextOutput) and missing.level == "error"
    bad_snip = await registry.run("/snip zzzzzz", ctx)
    assert isinstance(bad_snip, TextOutput) and bad_snip.level == "error"


def test_always_allow_creates_the_file_and_keeps_existing_content(tmp_path):
    path = persist_allow_rule(tmp_path, "Bash(git status:*)")
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["Bash(git status:*)"]}}
    path.write_text(json.dumps({"model": "m", "permissions": {"allow": ["Read"], "deny": ["Bash(rm:*)"]}}))
    persist_allow_rule(tmp_path, "Bash(make:*)")
    persist_allow_rule(tmp_path, "Bash(make:*)")
    assert json.loads(path.read_text()) == {
        "model": "m",
        "permissions": {"allow": ["Read", "Bash(make:*)"], "deny": ["Bash(rm:*)"]},
    }


@pytest.mark.parametrize(
    "content", ["{broken", "[1, 2]", '{"permissions": []}', '{"permissions": {"allow": "x"}}']
)
def test_a_file_that_is_not_what_we_expect_is_never_overwritten(tmp_path, content):
    path = tmp_path / ".agent_repl" / "settings.json"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(AllowRuleError, match="settings.json"):
        persist_allow_rule(tmp_path, "Bash(ls:*)")
    assert path.read_text() == content
