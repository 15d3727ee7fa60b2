"""Agent definitions: Claude Code's front matter, where they are read from, trust, and /agents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_repl.agents.definitions import (
    DEFAULT_AGENT_TYPE,
    held_back_definitions,
    load_catalog,
    parse_definition,
    tool_names_for,
)
from agent_repl.bootstrap import close_session
from agent_repl.commands import CommandContext, SessionHolder, default_registry
from agent_repl.commands.results import AgentsReport
from agent_repl.core.model.events import SystemMessageEvent, ToolResultEvent

from .support import bodies, emulator, run, session_on

REVIEWER = """---
name: code-reviewer
description: >
  Reviews a change for bugs.
  Use after editing code.
tools: Read, Grep, Bash
model: haiku
---
You review code. Report bugs with file and line.
"""


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def test_claude_code_front_matter_is_read_as_claude_code_writes_it():
    d = parse_definition(REVIEWER, source="x.md", scope="project")
    assert (d.name, d.description, d.tools, d.model) == (
        "code-reviewer", "Reviews a change for bugs. Use after editing code.", ("Read", "Grep", "Bash"), "haiku",
    )
    assert d.prompt == "You review code. Report bugs with file and line."
    listed = parse_definition("---\nname: a\ndescription: d\ntools: [Glob, Read]\nmodel: inherit\n---\n", source="", scope="user")
    assert listed.tools == ("Glob", "Read") and listed.model is None and listed.prompt  # the default prompt


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: x\n", "no front matter"),
        ("---\nname: [unclosed\n---\nbody", "not valid YAML at line 2"),
        ("---\n- a\n- b\n---\n", "must be `key: value` lines"),
        ("---\ndescription: d\n---\n", "`name` is required"),
        ("---\nname: has space\ndescription: d\n---\n", "`name` is required"),
        ("---\nname: a\n---\n", "`description` is required"),
        ("---\nname: a\ndescription: d\ntools: 3\n---\n", "`tools` must be"),
        ("---\nname: a\ndescription: d\nmodel: 7\n---\n", "`model` must be"),
    ],
)
def test_bad_front_matter_is_a_clear_message(text, problem):
    with pytest.raises(ValueError, match=problem.replace("[", r"\[").replace("`", "`")):
        parse_definition(text, source="", scope="project")


def test_the_project_wins_over_the_user_and_its_files_wait_for_trust(tmp_path):
    home, cwd = tmp_path / "home", tmp_path / "project"
    write(home / "agents", "reviewer.md", REVIEWER.replace("Reviews a change", "User reviewer"))
    write(cwd / ".claude" / "agents", "reviewer.md", REVIEWER.replace("Reviews a change", "Claude Code reviewer"))
    write(cwd / ".agent_repl" / "agents", "reviewer.md", REVIEWER)
    write(cwd / ".agent_repl" / "agents", "broken.md", "---\nname: broken\n---\n")
    trusted = load_catalog(home, cwd, project_trusted=True)
    assert sorted(trusted.definitions) == ["code-reviewer", DEFAULT_AGENT_TYPE]
    assert trusted.definitions["code-reviewer"].description.startswith("Reviews a change")
    assert len(trusted.problems) == 1 and "broken.md: `description` is required" in trusted.problems[0]
    untrusted = load_catalog(home, cwd, project_trusted=False)
    assert untrusted.definitions["code-reviewer"].description.startswith("User reviewer")
    assert len(untrusted.held_back) == 3 and untrusted.problems == []
    assert held_back_definitions(cwd, project_trusted=False) == [
        "agent definition .claude/agents/reviewer.md",
        "agent definition .agent_repl/agents/broken.md",
        "agent definition .agent_repl/agents/reviewer.md",
    ]
    assert held_back_definitions(cwd, project_trusted=True) == []


def test_a_definition_widens_the_tools_but_never_to_task():
    d = parse_definition("---\nname: all\ndescription: d\ntools: '*'\n---\n", source="", scope="user")
    available = ["Bash", "Edit", "Glob", "Read", "Task", "TodoWrite", "ToolSearch"]
    assert tool_names_for(d, available, default=("Read",)) == ["Bash", "Edit", "Glob", "Read"]
    plain = parse_definition("---\nname: p\ndescription: d\n---\n", source="", scope="user")
    assert tool_names_for(plain, available, default=("Glob", "Grep", "Read")) == ["Glob", "Read"]


async def test_a_project_agent_is_listed_by_agents_and_in_task_and_its_bad_file_is_a_notice(project, home):
    write(project / ".agent_repl" / "agents", "reviewer.md", REVIEWER.replace("model: haiku\n", ""))
    write(project / ".claude" / "agents", "bad.md", "no front matter here")
    main = [
        {"tools": [{"name": "Task", "input": {"description": "Review", "prompt": "AGENT-R: review", "subagent_type": "code-reviewer"}}]},
        {"text": "Reviewed."},
    ]
    agents = [{"prompt": "AGENT-R", "steps": [{"tools": [{"name": "Bash", "input": {"command": "echo checked"}}]}, {"text": "No bugs."}]}]
    server = emulator(main, agents)
    session = await session_on(server, project, home, project_trusted=True)
    try:
        registry = default_registry()
        report = await registry.run("/agents", CommandContext(SessionHolder(session, None), registry))  # type: ignore[arg-type]
        assert isinstance(report, AgentsReport)
        assert [(a.name, a.scope, a.tools, a.model) for a in report.agents] == [
            ("code-reviewer", "project", ["Bash", "Grep", "Read"], "inherit"),
            (DEFAULT_AGENT_TYPE, "built-in", ["Glob", "Grep", "Read"], "inherit"),
        ]
        assert any("bad.md: no front matter" in p for p in report.problems)

        events = await run(session, "review my change")
        notices = [e.message.content for e in events if isinstance(e, SystemMessageEvent)]
        assert any("bad.md: no front matter" in n for n in notices)
        (result,) = [e for e in events if isinstance(e, ToolResultEvent)]
        assert not result.is_error and result.message.tool_results()[0].text() == "No bugs."
        task = next(t for t in bodies(server)[0]["tools"] if t["name"] == "Task")
        assert "- code-reviewer: Reviews a change for bugs. Use after editing code. (Tools: Bash, Grep, Read)" in task["description"]
        (child_first, _) = bodies(server, "AGENT-R")
        assert "You review code." in json.dumps(child_first["system"])
        assert [t["name"] for t in child_first["tools"]] == ["Bash", "Grep", "Read"]
        # The sub-agent's Bash ran (permissions are skipped in this session) and its output came back.
        assert "checked" in json.dumps(bodies(server, "AGENT-R")[1]["messages"][-1])
    finally:
        await close_session(session)
        server.stop()
