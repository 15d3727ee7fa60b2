"""/skills: the skills the model is offered in this session, and those a folder's trust would add."""

from __future__ import annotations

from agent_repl.commands.registry import CommandContext
from agent_repl.commands.results import CommandResult, TextOutput
from agent_repl.tools.skill import SKILL_TOOL_NAME, Skill, held_back_skills


async def skills_command(ctx: CommandContext, args: str) -> CommandResult:
    session = ctx.session
    tool = session.tools.get(SKILL_TOOL_NAME)
    skills = tool.catalog.sorted() if isinstance(tool, Skill) else []
    lines = [f"{s.name} ({s.scope}): {s.description}\n  {s.folder}" for s in skills]
    waiting = held_back_skills(session.cwd, project_trusted=session.settings.project_trusted)
    if waiting:
        lines.append(f"not loaded until you trust this folder: {', '.join(w.removeprefix('skill ') for w in waiting)}")
    if not skills:
        where = "~/.claude/skills/NAME/SKILL.md, .claude/skills/NAME/SKILL.md or .agent_repl/skills/"
        lines.insert(0, f"no skills in this session (a skill is a folder with a SKILL.md: {where})")
    return TextOutput("\n".join(lines))
