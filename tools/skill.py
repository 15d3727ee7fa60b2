"""Skill: the model loads a skill's instructions by name (Claude Code's tool and input).

A skill is a folder with a `SKILL.md`, in Claude Code's format:

    ---
    name: pdf-forms                 # letters, digits and '-' (the folder's name when left out)
    description: Fill in PDF forms. Use when the user asks to fill or read a PDF form.
    allowed-tools: Read, Bash       # accepted and shown; the session's rules still decide
    ---
    The instructions, which may name files beside SKILL.md (reference.md, scripts/fill.py).

Skills are read at the session's start from the user's `~/.claude/skills/` and
`~/.agent_repl/skills/`, then the project's `.claude/skills/` and `.agent_repl/skills/` (a later
one of the same name wins). Only names and descriptions go into this tool's description; the body
is the tool's answer, with the folder's path so the model can Read what lies beside it. The
project's skills are the repository's words, so they apply only in a trusted folder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from agent_repl.core.config.front_matter import (
    FrontMatterError,
    Scope,
    names_field,
    source_dirs,
    split_front_matter,
    text_field,
)
from agent_repl.core.tooling.display import HEADLINE_WIDTH, ToolDisplay, one_line, structured_dict
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, load_description
from agent_repl.tools._common import ToolArgs

SKILL_FILE = "SKILL.md"
SKILL_TOOL_NAME = "Skill"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
MAX_DESCRIPTION_CHARS = 1024
# The answer's first line; the compaction's re-injection finds a loaded skill's text by it.
LOADED_PREFIX = "Base directory for this skill: "


@dataclass(frozen=True)
class SkillDefinition:
    name: str
    description: str
    body: str
    folder: Path
    scope: Scope
    allowed_tools: tuple[str, ...] = ()


@dataclass
class SkillCatalog:
    skills: dict[str, SkillDefinition] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    # Project skills not loaded because the folder is not trusted (their SKILL.md files).
    held_back: list[str] = field(default_factory=list)

    def sorted(self) -> list[SkillDefinition]:
        return [self.skills[name] for name in sorted(self.skills)]


def parse_skill(text: str, *, folder: Path, scope: Scope) -> SkillDefinition:
    """One SKILL.md; raises FrontMatterError naming the field that is wrong."""
    data, body = split_front_matter(text, required=True)
    name = text_field(data, "name") or folder.name
    if not _NAME.match(name):
        raise FrontMatterError("`name` must be letters, digits and '-' (at most 64)")
    description = text_field(data, "description")
    if not description:
        raise FrontMatterError("`description` is required: what the skill does and when to use it")
    description = " ".join(description.split())[:MAX_DESCRIPTION_CHARS]
    allowed = names_field(data, "allowed-tools")
    return SkillDefinition(name, description, body.strip("\n"), folder, scope, allowed)


def _skill_files(directory: Path) -> list[Path]:
    try:
        return sorted(p / SKILL_FILE for p in directory.iterdir() if p.is_dir() and (p / SKILL_FILE).is_file())
    except OSError:
        return []


def held_back_skills(cwd: Path, *, project_trusted: bool) -> list[str]:
    """What the trust question lists: the project's skills that wait for the folder's trust."""
    if project_trusted:
        return []
    dirs = (cwd / ".claude" / "skills", cwd / ".agent_repl" / "skills")
    return [f"skill {p.parent.relative_to(cwd)}" for d in dirs for p in _skill_files(d)]


def load_skills(home: Path, claude: Path, cwd: Path, *, project_trusted: bool) -> SkillCatalog:
    catalog = SkillCatalog()
    for source in source_dirs("skills", home=home, claude=claude, cwd=cwd):
        files = _skill_files(source.path)
        if source.scope == "project" and not project_trusted:
            catalog.held_back.extend(str(p) for p in files)
            continue
        for path in files:
            try:
                skill = parse_skill(path.read_text(encoding="utf-8"), folder=path.parent.resolve(), scope=source.scope)
            except (OSError, UnicodeDecodeError) as exc:
                catalog.problems.append(f"{path}: cannot read it ({exc}); that skill is not available")
                continue
            except FrontMatterError as exc:
                catalog.problems.append(f"{path}: {exc}; that skill is not available")
                continue
            catalog.skills[skill.name] = skill
    return catalog


def skill_text(skill: SkillDefinition, args: str = "") -> str:
    """A loaded skill as the model reads it: its folder (files beside SKILL.md are read from there),
    its instructions, and the arguments it was given."""
    text = f"{LOADED_PREFIX}{skill.folder}\n\n{skill.body}"
    return f"{text}\n\nARGUMENTS: {args.strip()}" if args.strip() else text


def skill_listing(catalog: SkillCatalog) -> str:
    """The skills as the tool's description lists them: sorted, the same bytes every turn."""
    return "\n".join(f"- {s.name}: {s.description} ({s.scope})" for s in catalog.sorted())


class SkillArgs(ToolArgs):
    skill: str = Field(min_length=1, description="The skill's name, as listed (no arguments)")
    args: str | None = Field(default=None, description="Optional text for the skill's instructions")


class SkillDisplay(ToolDisplay):
    """`Skill(pdf-forms)`, and "Loaded skill pdf-forms" once it loaded."""

    def headline(self, name: str, tool_input: Mapping[str, Any], width: int = HEADLINE_WIDTH) -> str:
        return one_line(f"{name}({tool_input.get('skill', '')})", width)

    def summary(self, tool_input: Mapping[str, Any], structured: Any) -> str | None:
        loaded = structured_dict(structured).get("commandName")
        return f"Loaded skill {loaded}" if isinstance(loaded, str) else None


class Skill(Tool[SkillArgs]):
    name = SKILL_TOOL_NAME
    args_model = SkillArgs
    is_read_only: ClassVar[bool] = True
    display: ClassVar[ToolDisplay] = SkillDisplay()

    def __init__(self, catalog: SkillCatalog) -> None:
        self.catalog = catalog
        listing = skill_listing(catalog) or "(none)"
        self.description = f"{load_description(__file__, 'skill')}\n\n<available_skills>\n{listing}\n</available_skills>"

    async def run(self, args: SkillArgs, ctx: ToolContext) -> ToolOutput:
        name = args.skill.strip().lstrip("/")
        skill = self.catalog.skills.get(name)
        if skill is None:
            known = ", ".join(sorted(self.catalog.skills)) or "none"
            return ToolOutput.error(f"Unknown skill: {name}. The skills of this session: {known}.")
        return ToolOutput(
            content=skill_text(skill, args.args or ""),
            structured={"success": True, "commandName": skill.name},
            summary=f"loaded skill {skill.name} ({skill.scope})",
        )
