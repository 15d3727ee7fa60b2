"""Skill files read as Claude Code writes them (agent_repl/tools/skill.py): what is offered, what is
refused with a message naming the file and field, and what waits for the folder's trust."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent_repl.core.config.front_matter import FrontMatterError
from agent_repl.core.tooling.tool import ToolContext
from agent_repl.tools.skill import Skill, SkillArgs, held_back_skills, load_skills, parse_skill

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code_project"


def _skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_fixture_skill_is_read_with_its_name_and_description(tmp_path):
    shutil.copytree(FIXTURE / ".claude", tmp_path / ".claude")
    catalog = load_skills(tmp_path / "home", tmp_path / "claude", tmp_path, project_trusted=True)
    [skill] = catalog.sorted()
    assert skill.name == "local-smoke-test" and skill.scope == "project"
    assert skill.description.startswith("Local verification checklist for 1Code desktop startup")
    assert skill.body.startswith("Use this skill when planning or running a local smoke test")
    assert catalog.problems == []


def test_a_name_defaults_to_the_folder_and_a_later_folder_wins(tmp_path):
    _skill(tmp_path / "claude" / "skills", "notes", "---\ndescription: the user's notes\n---\nuser body")
    _skill(tmp_path / ".agent_repl" / "skills", "notes", "---\ndescription: the project's notes\n---\nproject body")
    catalog = load_skills(tmp_path / "home", tmp_path / "claude", tmp_path, project_trusted=True)
    assert catalog.skills["notes"].description == "the project's notes"


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("no front matter at all", "no front matter"),
        ("---\nname: x\n---\nbody", "`description` is required"),
        ("---\nname: not a name!\ndescription: d\n---\nbody", "`name`"),
    ],
)
def test_a_bad_skill_file_is_a_problem_naming_file_and_field(tmp_path, text, field):
    path = _skill(tmp_path / ".claude" / "skills", "bad", text)
    catalog = load_skills(tmp_path / "home", tmp_path / "claude", tmp_path, project_trusted=True)
    assert catalog.skills == {}
    [problem] = catalog.problems
    assert problem.startswith(str(path)) and field in problem


def test_parse_refuses_a_description_that_is_not_text(tmp_path):
    with pytest.raises(FrontMatterError, match="`description` must be text"):
        parse_skill("---\ndescription: {a: 1}\n---\n", folder=tmp_path, scope="user")


def test_project_skills_wait_for_trust(tmp_path):
    shutil.copytree(FIXTURE / ".claude", tmp_path / ".claude")
    catalog = load_skills(tmp_path / "home", tmp_path / "claude", tmp_path, project_trusted=False)
    assert catalog.skills == {} and len(catalog.held_back) == 1
    assert held_back_skills(tmp_path, project_trusted=False) == ["skill .claude/skills/local-smoke-test"]
    assert held_back_skills(tmp_path, project_trusted=True) == []


async def test_the_tool_lists_names_and_loads_a_body_with_its_folder(tmp_path):
    _skill(tmp_path / "claude" / "skills", "pdf", "---\ndescription: Fill PDF forms\n---\nSee forms.md.\n")
    tool = Skill(load_skills(tmp_path / "home", tmp_path / "claude", tmp_path, project_trusted=True))
    assert tool.description.endswith("<available_skills>\n- pdf: Fill PDF forms (user)\n</available_skills>")
    assert "See forms.md" not in tool.description
    ctx = ToolContext(cwd=tmp_path, tool_results_dir=tmp_path / "r")
    output = await tool.run(SkillArgs(skill="pdf", args="invoice.pdf"), ctx)
    folder = (tmp_path / "claude" / "skills" / "pdf").resolve()
    assert output.content == f"Base directory for this skill: {folder}\n\nSee forms.md.\n\nARGUMENTS: invoice.pdf"
    missing = await tool.run(SkillArgs(skill="nope"), ctx)
    assert missing.is_error and missing.content == "Unknown skill: nope. The skills of this session: pdf."


def test_the_display_names_the_skill():
    display = Skill(load_skills(Path("/nonexistent"), Path("/nonexistent"), Path("/nonexistent"), project_trusted=True)).display
    assert display.headline("Skill", {"skill": "pdf"}) == "Skill(pdf)"
    assert display.summary({"skill": "pdf"}, {"success": True, "commandName": "pdf"}) == "Loaded skill pdf"
