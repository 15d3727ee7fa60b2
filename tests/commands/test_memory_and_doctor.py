"""`# note` (/remember) and /doctor, through the registry as a front end runs them."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from agent_repl.commands import CommandContext, SessionHolder, default_registry
from agent_repl.commands.remember import memory_note
from agent_repl.commands.results import ConfigReport, DoctorReport, MemoryChoices, TextOutput
from agent_repl.core.api.client import ModelClient
from agent_repl.core.config.settings import Settings
from agent_repl.core.model.transcript_sink import MemorySink
from agent_repl.session import Session
from agent_repl.ui.render import render_result


def _context(tmp_path: Path, **settings_fields) -> CommandContext:
    from agent_repl.bootstrap import build_pipeline
    from agent_repl.tools import builtin_tools

    fields = {"home": tmp_path / "home", "api_key": "sk-ant-test-key", "base_url": "http://127.0.0.1:9"} | settings_fields
    settings = Settings(**fields)
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    tools = builtin_tools()
    session = Session(
        session_id="s-1",
        cwd=project,
        settings=settings,
        client=ModelClient(api_key="x", base_url="http://127.0.0.1:9", max_retries=0),
        tools=tools,
        projector=build_pipeline(settings, project, tools, tmp_path / "r"),
        sink=MemorySink(),
        tool_results_dir=tmp_path / "r",
    )

    async def never(resume, previous):
        raise AssertionError("no session switch here")

    return CommandContext(SessionHolder(session, never), default_registry())


def _text(result) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(render_result(result))
    return console.export_text()


def test_what_counts_as_a_memory_note():
    assert memory_note("# run tests with make test") == "run tests with make test"
    assert memory_note("  #use tabs ") == "use tabs"
    for prompt in ("## Plan", "#!/bin/sh", "#", "# Title\n\nthe body of a pasted document", "fix #12"):
        assert memory_note(prompt) is None, prompt


async def test_a_note_asks_where_then_goes_to_the_chosen_file_and_the_model_hears_of_it(tmp_path):
    ctx = _context(tmp_path)
    choices = await ctx.registry.run("/remember run tests with make test", ctx)
    assert isinstance(choices, MemoryChoices)
    assert [t.flag for t in choices.targets] == ["--project", "--user"]
    project_file = Path(choices.targets[0].path)
    assert project_file == ctx.session.cwd / "AGENTS.md" and not project_file.exists()

    saved = await ctx.registry.run("/remember --project run tests with make test", ctx)
    assert saved == TextOutput(f"Saved to {project_file}")
    assert project_file.read_text() == "- run tests with make test\n"
    assert "run tests with make test" in ctx.session.messages[-1].text()
    assert ctx.session.messages[-1].is_meta

    user_file = ctx.session.settings.home / "AGENTS.md"
    await ctx.registry.run("/remember --user answer briefly", ctx)
    assert user_file.read_text() == "- answer briefly\n"


async def test_a_note_keeps_what_the_file_had_and_prefers_an_existing_claude_md(tmp_path):
    ctx = _context(tmp_path)
    claude = ctx.session.cwd / "CLAUDE.md"
    claude.write_text("# Notes\nno newline at the end")
    choices = await ctx.registry.run("/remember keep it", ctx)
    assert isinstance(choices, MemoryChoices) and Path(choices.targets[0].path) == claude
    await ctx.registry.run("/remember --project keep it", ctx)
    assert claude.read_text() == "# Notes\nno newline at the end\n- keep it\n"


async def test_bad_notes_and_targets_are_refused_with_nothing_written(tmp_path):
    ctx = _context(tmp_path)
    empty = await ctx.registry.run("/remember --project   ", ctx)
    assert isinstance(empty, TextOutput) and empty.level == "error"
    (ctx.session.cwd / "AGENTS.md").mkdir()
    refused = await ctx.registry.run("/remember --project x", ctx)
    assert isinstance(refused, TextOutput) and refused.level == "error" and "not a regular file" in refused.text


async def test_doctor_reports_each_check_and_never_shows_the_key(tmp_path):
    ctx = _context(tmp_path)
    report = await ctx.registry.run("/doctor", ctx)
    assert isinstance(report, DoctorReport)
    by_name = {c.name: c for c in report.checks}
    assert by_name["ripgrep"].status == "ok" and "ripgrep" in by_name["ripgrep"].detail
    assert by_name["tree-sitter"].status == "ok"
    assert by_name["API key"].status == "ok"
    assert {"python", "sandbox", "endpoint", "user settings", "project settings", "agent home"} <= set(by_name)
    assert "sk-ant-test-key" not in _text(report)


async def test_doctor_names_a_settings_file_that_does_not_parse_and_a_key_of_the_wrong_shape(tmp_path):
    ctx = _context(tmp_path, api_key="not-a-key")
    broken = ctx.session.cwd / ".agent_repl" / "settings.json"
    broken.parent.mkdir()
    broken.write_text('{"model": ')
    report = await ctx.registry.run("/doctor", ctx)
    assert isinstance(report, DoctorReport)
    by_name = {c.name: c for c in report.checks}
    assert by_name["project settings"].status == "fail" and str(broken) in by_name["project settings"].detail
    assert by_name["API key"].status == "warn" and "does not start with sk-ant-" in by_name["API key"].detail
    assert "1 problem(s) found" in _text(report)


async def test_config_lists_settings_with_their_source_and_changes_one_in_place(tmp_path):
    ctx = _context(tmp_path)
    user_file = ctx.session.settings.home / "settings.json"
    user_file.parent.mkdir(parents=True)
    user_file.write_text('{"max_retries": 2}\n')
    report = await ctx.registry.run("/config", ctx)
    assert isinstance(report, ConfigReport)
    rows = {row.key: row for row in report.rows}
    assert rows["max_retries"].source == "user file" and rows["autocompact"].source == "default"

    changed = await ctx.registry.run("/config thinking_display omitted", ctx)
    assert isinstance(changed, TextOutput) and changed.level == "info"
    assert "applies from the next request" in changed.text
    assert json.loads(user_file.read_text()) == {"max_retries": 2, "thinking_display": "omitted"}
    assert ctx.session.settings.thinking_display == "omitted"

    later = await ctx.registry.run("/config autocompact false", ctx)
    assert "from the next session" in later.text and json.loads(user_file.read_text())["autocompact"] is False

    await ctx.registry.run("/config thinking_display --unset", ctx)
    assert "thinking_display" not in json.loads(user_file.read_text())
    assert ctx.session.settings.thinking_display == "summarized"


async def test_config_refuses_bad_values_unknown_keys_and_broken_files_without_writing(tmp_path):
    ctx = _context(tmp_path)
    user_file = ctx.session.settings.home / "settings.json"
    user_file.parent.mkdir(parents=True)
    user_file.write_text('{"max_retries": 2}\n')
    for line in ("/config max_retries 99", "/config thinking_display loud", "/config api_key x"):
        refused = await ctx.registry.run(line, ctx)
        assert isinstance(refused, TextOutput) and refused.level == "error", line
    assert user_file.read_text() == '{"max_retries": 2}\n'
    user_file.write_text("{broken")
    refused = await ctx.registry.run("/config autocompact false", ctx)
    assert refused.level == "error" and "nothing was changed" in refused.text
    assert user_file.read_text() == "{broken"


async def test_config_with_project_writes_the_projects_file(tmp_path):
    ctx = _context(tmp_path)
    done = await ctx.registry.run("/config --project model claude-sonnet-4-5", ctx)
    assert done.level == "info", done
    project_file = ctx.session.cwd / ".agent_repl" / "settings.json"
    assert json.loads(project_file.read_text()) == {"model": "claude-sonnet-4-5"}
    assert ctx.session.model == "claude-sonnet-4-5"
