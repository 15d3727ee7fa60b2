"""Custom slash commands: Markdown files whose text becomes the prompt, in Claude Code's format.

    ---
    description: Review a pull request          # shown in /help (else the body's first line)
    argument-hint: [pr-number] [priority]        # shown after the name
    allowed-tools: Bash(git diff:*), Bash(git log:*)
    model: haiku                                 # accepted; the turn runs on the session's model
    ---
    Review PR #$1 with priority $2 ($ARGUMENTS is all of it).
    The diff: !`git diff --stat`
    The guide: @docs/review.md

They are read from the user's `~/.claude/commands/` and `~/.agent_repl/commands/`, then the
project's `.claude/commands/` and `.agent_repl/commands/` (a later one of the same name wins),
every time a command is looked up, so a file added during the session works at once. A
subfolder is a namespace: `.claude/commands/frontend/component.md` is `/component`, shown as
"(project:frontend)", and also `/frontend:component` when two folders hold the same name. The
project's files are the repository's words and shell lines, so they apply only in a trusted
folder. A file that cannot be read or parsed is a problem to report, never a crash.

`` !`cmd` `` runs before the prompt is sent, through the Bash tool and its permission rules (the
command's `allowed-tools` added to them); a refused or failing line sends nothing. `@path` is
attached by the turn itself, as for a typed prompt.
"""

from __future__ import annotations

import os
import re
import shlex
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agent_repl.commands.registry import Command, CommandContext
from agent_repl.core.config.front_matter import (
    FrontMatterError,
    Scope,
    claude_home,
    names_field,
    source_dirs,
    split_front_matter,
    text_field,
)
from agent_repl.core.permissions.rules import Rule
from agent_repl.tools.skill import SKILL_TOOL_NAME, Skill, SkillDefinition, skill_text

if TYPE_CHECKING:
    from agent_repl.commands.results import CommandResult
    from agent_repl.session import Session

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS\b|[1-9][0-9]?)")
# `` !`cmd` `` at the start of a line or after whitespace.
_SHELL = re.compile(r"(?:^|(?<=\s))!`([^`\n]+)`", re.MULTILINE)
MAX_DEPTH = 4


@dataclass(frozen=True)
class CustomCommand:
    name: str
    # The subfolder path joined with ":" ("" at the top of the folder).
    namespace: str
    scope: Scope
    description: str
    argument_hint: str
    allowed_tools: tuple[str, ...]
    model: str | None
    body: str
    source: Path

    @property
    def origin(self) -> str:
        """Where it comes from, as /help shows it: "(project)", "(user:backend)"."""
        return f"({self.scope}{':' + self.namespace if self.namespace else ''})"

    @property
    def qualified_name(self) -> str:
        return f"{self.namespace}:{self.name}" if self.namespace else self.name


@dataclass
class CustomCatalog:
    # By lower-case name; a namespaced command also under `namespace:name`.
    commands: dict[str, CustomCommand] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    # Project files not loaded because the folder is not trusted.
    held_back: list[str] = field(default_factory=list)

    def listed(self) -> list[CustomCommand]:
        """Each command once, in name order."""
        seen: dict[Path, CustomCommand] = {}
        for command in self.commands.values():
            seen.setdefault(command.source, command)
        return sorted(seen.values(), key=lambda c: (c.name, c.namespace))


def parse_command_file(text: str, *, name: str, namespace: str, scope: Scope, source: Path) -> CustomCommand:
    """One command file; raises FrontMatterError naming the field that is wrong."""
    data, body = split_front_matter(text)
    description = text_field(data, "description")
    hint = text_field(data, "argument-hint") or ""
    allowed = names_field(data, "allowed-tools")
    for rule in allowed:
        try:
            Rule.parse(rule)
        except ValueError as exc:
            raise FrontMatterError(f"`allowed-tools`: {exc}") from None
    model = text_field(data, "model")
    body = body.strip("\n")
    if not description:
        first = next((line.strip().lstrip("#").strip() for line in body.splitlines() if line.strip()), "")
        description = first[:100]
    return CustomCommand(
        name=name, namespace=namespace, scope=scope, description=" ".join(description.split()),
        argument_hint=hint, allowed_tools=allowed, model=model or None, body=body, source=source,
    )


def _command_files(directory: Path) -> list[tuple[Path, tuple[str, ...]]]:
    """The Markdown files under `directory` with their subfolder parts, sorted; links to folders
    are not followed."""
    found: list[tuple[Path, tuple[str, ...]]] = []
    if not directory.is_dir():
        return found
    for root, dirs, files in os.walk(directory):
        parts = Path(root).relative_to(directory).parts
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if len(parts) < MAX_DEPTH else []
        found.extend((Path(root) / f, parts) for f in sorted(files) if f.endswith(".md") and not f.startswith("."))
    return sorted(found)


def load_custom_commands(home: Path, claude: Path, cwd: Path, *, project_trusted: bool) -> CustomCatalog:
    catalog = CustomCatalog()
    for source in source_dirs("commands", home=home, claude=claude, cwd=cwd):
        files = _command_files(source.path)
        if source.scope == "project" and not project_trusted:
            catalog.held_back.extend(str(path) for path, _ in files)
            continue
        for path, parts in files:
            name = path.stem
            if not _NAME.match(name) or not all(_NAME.match(p) for p in parts):
                catalog.problems.append(f"{path}: a command name is letters, digits, '-', '_' and '.'; not loaded")
                continue
            try:
                text = path.read_text(encoding="utf-8")
                command = parse_command_file(text, name=name, namespace=":".join(parts), scope=source.scope, source=path)
            except (OSError, UnicodeDecodeError) as exc:
                catalog.problems.append(f"{path}: cannot read it ({exc}); that command is not available")
                continue
            except FrontMatterError as exc:
                catalog.problems.append(f"{path}: {exc}; that command is not available")
                continue
            catalog.commands[name.lower()] = command
            if command.namespace:
                catalog.commands[command.qualified_name.lower()] = command
    return catalog


def session_commands(session: Session) -> CustomCatalog:
    """The custom commands of the session's user and folder, read now."""
    return load_custom_commands(
        session.settings.home, claude_home(os.environ), session.cwd, project_trusted=session.settings.project_trusted
    )


def _words(args: str) -> list[str]:
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def expand_arguments(body: str, args: str) -> str:
    """`$ARGUMENTS` becomes the whole argument text, `$1`, `$2`... its words (quotes group words; a
    missing one is empty). A body with neither gets the arguments appended, so they are not lost."""
    words = _words(args)
    used = False

    def substitute(match: re.Match[str]) -> str:
        nonlocal used
        used = True
        key = match.group(1)
        if key == "ARGUMENTS":
            return args
        index = int(key) - 1
        return words[index] if index < len(words) else ""

    text = _PLACEHOLDER.sub(substitute, body)
    if not used and args.strip():
        text = f"{text.rstrip()}\n\nARGUMENTS: {args.strip()}"
    return text


def shell_lines(text: str) -> list[str]:
    """The `` !`cmd` `` commands of a prompt, in order."""
    return [m.group(1).strip() for m in _SHELL.finditer(text)]


@dataclass(frozen=True)
class Expansion:
    prompt: str
    # Why nothing is sent ("" when the prompt is ready).
    error: str = ""


async def expand_command(session: Session, command: CustomCommand, args: str, *, interactive: bool) -> Expansion:
    """The prompt `command` sends for `args`: placeholders filled, shell lines replaced by their output."""
    text = expand_arguments(command.body, args)
    outputs: dict[str, str] = {}
    for line in shell_lines(text):
        if line in outputs:
            continue
        output, error = await run_shell_line(session, line, command.allowed_tools, interactive=interactive)
        if error:
            return Expansion("", f"/{command.name}: {error}; nothing was sent")
        outputs[line] = output
    return Expansion(_SHELL.sub(lambda m: outputs[m.group(1).strip()], text))


async def run_shell_line(
    session: Session, line: str, allowed_tools: tuple[str, ...], *, interactive: bool
) -> tuple[str, str]:
    """(output, "") or ("", why not): the Bash tool runs `line` under the session's rules plus
    `allowed_tools`; what the rules leave open is asked in the app and refused in print mode."""
    from agent_repl.core.loop.tool_execution import ToolCallOutcome, execute_tool_calls
    from agent_repl.core.model.messages import ToolUseBlock
    from agent_repl.core.permissions.rules import PermissionPolicy

    policy = session.permissions
    extra = [Rule.parse(r) for r in allowed_tools]
    widened = PermissionPolicy(
        [*policy.allow, *(r for r in extra if r not in policy.allow)], list(policy.deny),
        skip_all=policy.skip_all, roots=policy.roots,
    )
    ask = session.ask if interactive else None
    runtime = replace(session.tool_runtime(ask), permissions=widened)
    call = ToolUseBlock(id=f"toolu_cmd_{uuid.uuid4().hex[:20]}", name="Bash", input={"command": line})
    outcome: ToolCallOutcome | None = None
    async for item in execute_tool_calls(runtime, [call], session.cancelled):
        if isinstance(item, ToolCallOutcome):
            outcome = item
    if outcome is None:
        return "", f"`{line}` did not run"
    content = outcome.output.content
    text = content if isinstance(content, str) else ""
    if outcome.output.denied:
        hint = "" if interactive else " (the command's allowed-tools or a permission rule can allow it)"
        return "", f"`{line}` was not allowed{hint}"
    if outcome.output.is_error:
        first = text.strip().splitlines()[-1] if text.strip() else "it failed"
        return "", f"`{line}` failed: {first}"
    return text.rstrip("\n"), ""


def as_command(custom: CustomCommand) -> Command:
    """The registry's view of a custom command: its text becomes the next prompt."""

    async def run(ctx: CommandContext, args: str) -> CommandResult:
        from agent_repl.commands.results import PromptRequest, TextOutput

        expansion = await expand_command(ctx.session, custom, args, interactive=ctx.interactive)
        if expansion.error:
            return TextOutput(expansion.error, level="error")
        shown = f"/{custom.name}" + (f" {args.strip()}" if args.strip() else "")
        return PromptRequest(expansion.prompt, shown=shown)

    summary = f"{custom.description} {custom.origin}".strip()
    return Command(custom.name, summary, run, usage=custom.argument_hint)


def custom_command_table(session: Session) -> dict[str, Command]:
    """The registry's `custom_source`: the session's custom commands by every name that reaches
    them, then its skills as `/skill-name` (a command file of the same name wins)."""
    catalog = session_commands(session)
    made = {c.source: as_command(c) for c in catalog.listed()}
    table = {key: made[c.source] for key, c in catalog.commands.items()}
    for skill in session_skills(session):
        table.setdefault(skill.name.lower(), skill_command(skill))
    return table


def session_skills(session: Session) -> list[SkillDefinition]:
    """The skills the session's Skill tool offers (none without the tool)."""
    tool = session.tools.get(SKILL_TOOL_NAME)
    return tool.catalog.sorted() if isinstance(tool, Skill) else []


def skill_command(skill: SkillDefinition) -> Command:
    """`/skill-name [args]`: the user loads a skill themselves; its instructions, as the Skill tool
    gives them, open the next prompt."""

    async def run(ctx: CommandContext, args: str) -> CommandResult:
        from agent_repl.commands.results import PromptRequest

        shown = f"/{skill.name}" + (f" {args.strip()}" if args.strip() else "")
        return PromptRequest(skill_text(skill, args), shown=shown)

    return Command(skill.name, f"{skill.description} (skill, {skill.scope})", run, usage="[args]")
