"""/status, /permissions, /memory and /init, without any UI: what they return and write."""

from __future__ import annotations

import json
from pathlib import Path

from agent_repl.commands import CommandContext, SessionHolder, default_registry
from agent_repl.commands.results import (
    EditorRequest,
    PermissionsReport,
    PromptRequest,
    StatusReport,
    TextOutput,
)
from agent_repl.core.permissions.rules import PermissionRequest

from .test_commands import _session


def _ctx(tmp_path: Path) -> CommandContext:
    async def opener(resume, previous):  # pragma: no cover - these commands never switch sessions
        raise AssertionError("no session switch expected")

    return CommandContext(SessionHolder(_session(tmp_path), opener), default_registry())


async def test_status_names_version_model_endpoint_session_and_files(tmp_path: Path):
    (tmp_path / "AGENTS.md").write_text("# Agents\n")
    report = await default_registry().run("/status", _ctx(tmp_path))
    assert isinstance(report, StatusReport)
    rows = dict(report.rows)
    assert rows["version"].startswith("agent-repl ") and rows["session"] == "s-1"
    assert rows["endpoint"] == "http://127.0.0.1:9" and rows["model"]
    assert str(tmp_path / "AGENTS.md") in rows["memory files"]
    assert "settings.json (none)" in rows["settings files"]


async def test_permissions_list_add_and_remove_rules_in_the_project_file(tmp_path: Path):
    ctx = _ctx(tmp_path)
    registry = ctx.registry
    added = await registry.run("/permissions allow Bash(git status:*)", ctx)
    assert isinstance(added, TextOutput) and added.level == "info"
    await registry.run("/permissions deny Bash(rm:*)", ctx)
    settings = tmp_path / ".agent_repl" / "settings.json"
    assert json.loads(settings.read_text()) == {"permissions": {"allow": ["Bash(git status:*)"], "deny": ["Bash(rm:*)"]}}
    report = await registry.run("/permissions", ctx)
    assert isinstance(report, PermissionsReport)
    assert report.allow == ["Bash(git status:*)"] and report.deny == ["Bash(rm:*)"]
    # The rules hold in this session at once.
    policy = ctx.session.permissions
    assert policy.check(PermissionRequest(tool_name="Bash", key="git status")) is not None
    removed = await registry.run("/permissions remove Bash(git status:*)", ctx)
    assert "removed Bash(git status:*)" in removed.text
    assert json.loads(settings.read_text())["permissions"]["allow"] == []
    assert (await registry.run("/permissions", ctx)).allow == []
    bad = await registry.run("/permissions allow not a rule(", ctx)
    assert isinstance(bad, TextOutput) and bad.level == "error"


async def test_memory_opens_the_projects_file_in_the_editor(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "nano -w")
    request = await default_registry().run("/memory", _ctx(tmp_path))
    assert isinstance(request, EditorRequest)
    assert request.command == ["nano", "-w"] and request.paths == [str(tmp_path / "AGENTS.md")]
    (tmp_path / "CLAUDE.md").write_text("x")
    assert (await default_registry().run("/memory", _ctx(tmp_path))).paths == [str(tmp_path / "CLAUDE.md")]


async def test_init_asks_the_model_for_an_agents_md(tmp_path: Path):
    request = await default_registry().run("/init keep it short", _ctx(tmp_path))
    assert isinstance(request, PromptRequest)
    assert "AGENTS.md" in request.prompt and request.prompt.endswith("The user adds: keep it short")
    assert request.shown == "/init keep it short"
