"""Agent definitions: the sub-agent types the Task tool can start.

A definition is a Markdown file with YAML front matter, in Claude Code's format:

    ---
    name: code-reviewer
    description: Reviews a change for bugs. Use after editing code.
    tools: Read, Grep, Glob          # or a YAML list; "*" for every tool of the session
    model: haiku                     # an alias, a model id, or inherit (the default)
    ---
    The system prompt of the sub-agent.

They are read from `~/.agent_repl/agents/`, then the project's `.claude/agents/` and
`.agent_repl/agents/` (a later one of the same name wins). The project's files are the
repository's words and tool choices, so, like its MCP servers, they apply only in a trusted
folder. A file that cannot be read or parsed is a problem to report, never a crash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

DEFAULT_AGENT_TYPE = "general-purpose"
# The tools a sub-agent gets unless its definition or the settings name others: it looks, it does not touch.
READ_ONLY_TOOLS = ("Glob", "Grep", "Read")
# Never given to a sub-agent: no Task inside a Task (fan-out without bound); the todo list and plan
# approval are the parent's; a sub-agent's tools are sent loaded, so it has nothing to search for.
NEVER_FOR_SUBAGENTS = frozenset({"Task", "TodoWrite", "ExitPlanMode", "ToolSearch"})
ALL_TOOLS = "*"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.DOTALL)

Scope = Literal["built-in", "user", "project", "session"]

DEFAULT_PROMPT = """\
You are a sub-agent of agent-repl, started by the main agent for one task. Do that task with the \
tools you have, then answer with what the main agent asked for: it sees only your final message, \
not your tool calls, so put every finding it needs there (paths, line numbers, short quotes). Be \
thorough but brief, and say plainly what you could not find or do."""


@dataclass(frozen=True)
class AgentDefinition:
    name: str
    description: str
    prompt: str
    # None: the default tools (read-only, or the settings' `subagent_tools`); ("*",): all of them.
    tools: tuple[str, ...] | None = None
    # None or "inherit": the model the session uses.
    model: str | None = None
    scope: Scope = "built-in"
    source: str = ""


@dataclass
class AgentCatalog:
    """The definitions of a session, by name, and what was wrong with the files that were left out."""

    definitions: dict[str, AgentDefinition] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    # Project definitions not loaded because the folder is not trusted (their files).
    held_back: list[str] = field(default_factory=list)

    def get(self, name: str | None) -> AgentDefinition | None:
        return self.definitions.get(name or DEFAULT_AGENT_TYPE)

    def sorted(self) -> list[AgentDefinition]:
        return [self.definitions[name] for name in sorted(self.definitions)]


def builtin_definition() -> AgentDefinition:
    return AgentDefinition(
        name=DEFAULT_AGENT_TYPE,
        description="Searches and reads the project to answer a question or gather facts for a task; use it for "
        "open-ended searches that would take many tool calls",
        prompt=DEFAULT_PROMPT,
    )


def _tool_names(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        names = [part.strip() for part in value.split(",")]
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        names = [item.strip() for item in value]
    else:
        raise ValueError("`tools` must be a comma-separated string or a list of tool names")
    return tuple(name for name in names if name)


def parse_definition(text: str, *, source: str, scope: Scope) -> AgentDefinition:
    """One definition file's text; raises ValueError with what is wrong (no file name: the caller adds it)."""
    match = _FRONT_MATTER.match(text.lstrip("\ufeff"))
    if match is None:
        raise ValueError("no front matter: the file must start with a --- line, the fields, and another --- line")
    import yaml  # here, not at import: most sessions define no agents

    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise ValueError(f"the front matter is not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, dict):
        raise ValueError("the front matter must be `key: value` lines (name, description, tools, model)")
    name, description = data.get("name"), data.get("description")
    if not isinstance(name, str) or not _NAME.match(name.strip()):
        raise ValueError("`name` is required: letters, digits, '-' and '_' (at most 64)")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("`description` is required: when the main agent should use this agent")
    tools = None if data.get("tools") is None else _tool_names(data["tools"])
    model = data.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ValueError("`model` must be a model name, an alias (sonnet, opus, haiku) or inherit")
    model = None if model is None or model.strip().lower() == "inherit" else model.strip()
    prompt = match.group(2).strip() or DEFAULT_PROMPT
    return AgentDefinition(
        name=name.strip(), description=" ".join(description.split()), prompt=prompt, tools=tools, model=model,
        scope=scope, source=source,
    )


# The project's definition folders, lower precedence first (agent-repl's own wins over Claude Code's).
PROJECT_DIRS = (Path(".claude") / "agents", Path(".agent_repl") / "agents")


def definition_dirs(home: Path, cwd: Path) -> list[tuple[Path, Scope]]:
    """Where definitions are read from, lowest precedence first."""
    return [(home / "agents", "user"), *((cwd / d, "project") for d in PROJECT_DIRS)]


def _markdown_files(directory: Path) -> list[Path]:
    try:
        return sorted(p for p in directory.glob("*.md") if p.is_file())
    except OSError:
        return []


def held_back_definitions(cwd: Path, *, project_trusted: bool) -> list[str]:
    """What the trust question lists: the project's agent definitions that wait for the folder's trust."""
    if project_trusted:
        return []
    return [f"agent definition {p.relative_to(cwd)}" for d in PROJECT_DIRS for p in _markdown_files(cwd / d)]


def definitions_from_json(data: object, *, source: str = "--agents") -> list[AgentDefinition]:
    """Definitions given as JSON (`--agents`, an SDK's `agents`): `{"name": {"description": ...,
    "prompt": ..., "tools": [...], "model": ...}}`. Raises ValueError naming the agent at fault."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a JSON object of agents by name")
    definitions = []
    for name, fields in data.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"{source}: {name!r} is not an agent name (letters, digits, '-' and '_', at most 64)")
        if not isinstance(fields, dict):
            raise ValueError(f"{source}: agent {name!r} must be an object with description and prompt")
        description, prompt, model = fields.get("description"), fields.get("prompt"), fields.get("model")
        if not isinstance(description, str) or not description.strip():
            raise ValueError(f"{source}: agent {name!r} needs a description (when the main agent should use it)")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError(f"{source}: agent {name!r} needs a prompt (its system prompt)")
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise ValueError(f"{source}: agent {name!r}: model must be a model name, an alias or inherit")
        try:
            tools = None if fields.get("tools") is None else _tool_names(fields["tools"])
        except ValueError as exc:
            raise ValueError(f"{source}: agent {name!r}: {exc}") from None
        definitions.append(AgentDefinition(
            name=name, description=" ".join(description.split()), prompt=prompt.strip(), tools=tools,
            model=None if model is None or model.strip().lower() == "inherit" else model.strip(),
            scope="session", source=source,
        ))  # fmt: skip
    return definitions


def load_catalog(
    home: Path, cwd: Path, *, project_trusted: bool, extra: list[AgentDefinition] | None = None
) -> AgentCatalog:
    """`extra`: definitions given at start (`--agents`); they win over files of the same name."""
    catalog = AgentCatalog(definitions={DEFAULT_AGENT_TYPE: builtin_definition()})
    for directory, scope in definition_dirs(home, cwd):
        files = _markdown_files(directory)
        if scope == "project" and not project_trusted:
            catalog.held_back.extend(str(p) for p in files)
            continue
        for path in files:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                catalog.problems.append(f"{path}: cannot read it ({exc}); that agent is not available")
                continue
            try:
                definition = parse_definition(text, source=str(path), scope=scope)
            except ValueError as exc:
                catalog.problems.append(f"{path}: {exc}; that agent is not available")
                continue
            catalog.definitions[definition.name] = definition
    for definition in extra or []:
        catalog.definitions[definition.name] = definition
    # Held-back definitions are named by the trust question and print mode's one warning line.
    return catalog


def catalog_listing(catalog: AgentCatalog, tool_names: list[str], default: tuple[str, ...]) -> str:
    """The agent types as the Task tool's description lists them: sorted, the same bytes every turn."""
    lines = []
    for definition in catalog.sorted():
        tools = ", ".join(tool_names_for(definition, tool_names, default=default))
        lines.append(f"- {definition.name}: {definition.description} (Tools: {tools})")
    return "\n".join(lines)


def tool_names_for(definition: AgentDefinition, available: list[str], *, default: tuple[str, ...]) -> list[str]:
    """The tools a sub-agent of this type gets, of those the session has, sorted."""
    wanted = definition.tools if definition.tools is not None else default
    names = set(available) if ALL_TOOLS in wanted else set(wanted) & set(available)
    return sorted(names - NEVER_FOR_SUBAGENTS)
