"""Paths the agent never writes without a question: files other programs take commands or grants from.

Writing one of these is how an agent would grant itself something: a git hook or `.git/config`
(fsmonitor, aliases, filters) runs code on the next git command; `.envrc` runs when a shell enters
the folder; `.vscode/tasks.json` runs when the editor opens it; `.agent_repl/`, `.claude/` and
`.mcp.json` hold the agent's own permission rules, hooks, MCP servers and agents. Every write tool
(Edit, Write, a Bash redirection or writing option) asks before touching one, in every permission
mode and under any allow rule, and "always" is never offered for it.

The decision is made on the path as named and on the path it resolves to (symlinks followed), by
the names of its parts, so a nested repository's `.git/` or a subfolder's `.envrc` is covered too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from agent_repl.core.permissions.credentials import home_from_env

# Folders whose every file is protected, wherever they sit: version control internals, the
# agent's own settings and agents, editors' run configurations, dev containers, hook managers.
PROTECTED_DIRS = frozenset({".git", ".agent_repl", ".claude", ".vscode", ".idea", ".devcontainer", ".husky", ".ssh"})
# Files protected by name, wherever they sit: MCP servers, direnv, git's own and shells' startup
# files, package managers' configuration (which can name a shell or preload code).
PROTECTED_FILES = frozenset(
    {
        ".mcp.json",
        ".envrc",
        ".git",
        ".gitconfig",
        ".npmrc",
        ".yarnrc",
        ".yarnrc.yml",
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".zlogout",
    }
)
# Folders under a user's config directory that other programs take commands from.
_CONFIG_DIRS = (("git",), ("direnv",), ("systemd",), ("autostart",))


# What the agent's home holds that grants things: the user's settings, agents and trusted folders.
_HOME_GRANTS = ("settings.json", "agents", "trusted-folders.json")


def _reason_for(path: Path, agent_home: Path) -> str | None:
    for name in _HOME_GRANTS:
        if path == agent_home / name or agent_home / name in path.parents:
            return "holds the agent's own settings"
    parts = path.parts
    for i, part in enumerate(parts):
        if part in PROTECTED_DIRS:
            return f"is inside {part}/, where other programs take commands or grants from"
        if part == ".config" and any(tuple(parts[i + 1 : i + 1 + len(d)]) == d for d in _CONFIG_DIRS):
            return "is configuration other programs run"
    if parts and parts[-1] in PROTECTED_FILES:
        return f"is {parts[-1]}, which other programs take commands or grants from"
    return None


def protected_reason(path: str | Path, env: Mapping[str, str] | None = None) -> str | None:
    """Why writing `path` always asks (one line, naming the path), or None when it is an ordinary file.

    `path` should be absolute (a relative one is taken from the current directory). `env` names the
    agent's home (`AGENT_REPL_HOME`); the process environment when None.
    """
    text = os.fspath(path)
    absolute = Path(os.path.normpath(text if os.path.isabs(text) else os.path.join(os.getcwd(), text)))
    agent_home = Path(os.path.realpath(home_from_env(os.environ if env is None else env)))
    for candidate in (absolute, Path(os.path.realpath(absolute))):
        why = _reason_for(candidate, agent_home)
        if why:
            return f"{text} {why}; writing it always asks"
    return None


def is_protected(path: str | Path, env: Mapping[str, str] | None = None) -> bool:
    """Whether a write to `path` must always be asked (every mode, every allow rule)."""
    return protected_reason(path, env) is not None
