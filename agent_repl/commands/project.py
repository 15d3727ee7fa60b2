"""Commands about the project and the setup: /status, /permissions, /memory and /init.

Each returns data; the front ends draw it, open the editor (/memory) or send the prompt (/init).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from agent_repl.commands.allow_rules import AllowRuleError, persist_rule, project_settings_path, remove_rule
from agent_repl.commands.registry import CommandContext
from agent_repl.commands.results import (
    CommandResult,
    EditorRequest,
    PermissionsReport,
    PromptRequest,
    StatusReport,
    TextOutput,
)
from agent_repl.core.api.system_prompt import PROJECT_INSTRUCTION_FILES

INIT_PROMPT = """\
Write an AGENTS.md file at the root of this project for coding agents that will work here.
Look around first (the layout, the README, the build and test setup, the main modules) and
then write a short, concrete file: how to build, run and test; how the code is organised and
where things live; the conventions to follow (style, naming, tests); and anything a newcomer
would trip over. If an AGENTS.md or CLAUDE.md already exists, improve it instead of starting
over. Keep it under about 150 lines, and say nothing you have not checked."""


def memory_files(cwd: Path) -> list[Path]:
    """The instruction files this project's sessions load (they open every session's context)."""
    return [cwd / name for name in PROJECT_INSTRUCTION_FILES if (cwd / name).is_file()]


def _rule_text(rule) -> str:
    return rule.tool if rule.spec is None else f"{rule.tool}({rule.spec})"


async def status_command(ctx: CommandContext, args: str) -> CommandResult:
    from agent_repl import __version__

    session = ctx.session
    settings = session.settings
    user_file = settings.home / "settings.json"
    project_file = project_settings_path(session.cwd)
    transcript = session.sink.path
    return StatusReport(
        rows=[
            ("version", f"agent-repl {__version__}"),
            ("model", session.model),
            ("endpoint", settings.base_url or "https://api.anthropic.com (the default)"),
            ("session", session.session_id),
            ("transcript", str(transcript) if transcript else "(not written yet)"),
            ("working directory", str(session.cwd)),
            ("permission mode", session.permission_mode.value),
            ("sandbox", session.sandbox.status_line()),
            ("settings files", ", ".join(f"{p}{'' if p.is_file() else ' (none)'}" for p in (user_file, project_file))),
            ("memory files", ", ".join(str(p) for p in memory_files(session.cwd)) or "none (AGENTS.md or CLAUDE.md; /init writes one)"),
        ]
    )


PERMISSIONS_USAGE = "usage: /permissions [allow RULE | deny RULE | remove RULE], e.g. /permissions allow Bash(git status:*)"


async def permissions_command(ctx: CommandContext, args: str) -> CommandResult:
    """List the rules in force; `allow RULE` / `deny RULE` add one to the project, `remove RULE` drops it."""
    from agent_repl.core.permissions.rules import Rule

    session = ctx.session
    policy = session.permissions
    verb, _, rule_text = args.strip().partition(" ")
    rule_text = rule_text.strip()
    if not verb:
        return PermissionsReport(
            allow=[_rule_text(r) for r in policy.allow],
            deny=[_rule_text(r) for r in policy.deny],
            mode=session.permission_mode.value,
            settings_file=str(project_settings_path(session.cwd)),
        )
    if verb not in ("allow", "deny", "remove") or not rule_text:
        return TextOutput(PERMISSIONS_USAGE, level="error")
    try:
        rule = Rule.parse(rule_text)
    except ValueError as exc:
        return TextOutput(str(exc), level="error")
    text = _rule_text(rule)
    try:
        if verb == "remove":
            removed = remove_rule(session.cwd, text)
            policy.allow[:] = [r for r in policy.allow if _rule_text(r) != text]
            policy.deny[:] = [r for r in policy.deny if _rule_text(r) != text]
            where = f" from {project_settings_path(session.cwd)}" if removed else " (it was not in the project's settings file)"
            return TextOutput(f"removed {text}{where}")
        path = persist_rule(session.cwd, text, verb)
    except AllowRuleError as exc:
        return TextOutput(str(exc), level="error")
    (policy.allow if verb == "allow" else policy.deny).append(rule)
    return TextOutput(f"{verb} {text} (saved to {path})")


async def memory_command(ctx: CommandContext, args: str) -> CommandResult:
    """Open the project's memory file in $VISUAL / $EDITOR (AGENTS.md is created when there is none)."""
    cwd = ctx.session.cwd
    files = memory_files(cwd) or [cwd / PROJECT_INSTRUCTION_FILES[0]]
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        command = shlex.split(editor)
    except ValueError:
        return TextOutput(f"cannot read the editor command {editor!r} ($VISUAL / $EDITOR)", level="error")
    return EditorRequest(command=command, paths=[str(p) for p in files])


async def init_command(ctx: CommandContext, args: str) -> CommandResult:
    """Ask the model to write (or improve) AGENTS.md for this project."""
    extra = f"\n\nThe user adds: {args.strip()}" if args.strip() else ""
    return PromptRequest(INIT_PROMPT + extra, shown="/init" + (f" {args.strip()}" if args.strip() else ""))
