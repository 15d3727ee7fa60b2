"""Auto-allow mode: which sandboxed commands may run without a question.

A command runs unasked only when the parse accounts for all of it (no hidden code, every
write inside the project and out of its protected paths, no read outside it: the same checks
an allow rule passes) and nothing in it needs the network, which the sandbox would refuse.
Deny rules are checked before this, as always.
"""

from __future__ import annotations

import os

from agent_repl.core.permissions.bash_rules import (
    CommandPattern,
    Place,
    all_invocations,
    allow_problem,
    parse_command,
)

# Commands (and subcommands) whose work is the network: asked, since the sandbox would refuse them.
NETWORK_COMMANDS = {"curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp",
                    "socat", "ping", "dig", "nslookup", "host", "http", "https", "aria2c"}  # fmt: skip
NETWORK_SUBCOMMANDS = {
    "git": {"clone", "fetch", "pull", "push", "ls-remote", "submodule", "remote"},
    "npm": {"install", "i", "ci", "add", "update", "publish", "exec", "view", "audit"},
    "npx": None,
    "pnpm": {"install", "i", "add", "update", "publish", "dlx"},
    "yarn": {"install", "add", "upgrade", "publish", "dlx"},
    "pip": {"install", "download", "index"},
    "pip3": {"install", "download", "index"},
    "uv": {"pip", "sync", "add", "lock", "tool", "run"},
    "uvx": None,
    "cargo": {"install", "fetch", "update", "publish", "add", "search"},
    "go": {"get", "install", "mod"},
    "gem": {"install", "update", "push"},
    "docker": {"pull", "push", "login", "run", "build"},
    "apt": None,
    "apt-get": None,
    "brew": None,
    "gh": None,
}
_ANY_WORD = CommandPattern.parse("*")


def needs_network(command: str) -> str | None:
    """The first part of the line whose work is the network, or None."""
    for inv in all_invocations(parse_command(command)):
        name = os.path.basename(inv.name or "")
        if name in NETWORK_COMMANDS:
            return name
        if name in NETWORK_SUBCOMMANDS:
            subcommands = NETWORK_SUBCOMMANDS[name]
            rest = [w for w in inv.argv[1:] if w is not None and not w.startswith("-")]
            if subcommands is None or (rest and rest[0] in subcommands):
                return f"{name} {rest[0]}" if rest and subcommands is not None else name
    return None


def auto_allow_problem(command: str, place: Place) -> str | None:
    """None when a sandboxed run of `command` may skip the question, else why it is asked."""
    line = parse_command(command)
    problem = allow_problem(line, [_ANY_WORD], place)
    if problem is not None:
        return problem
    network = needs_network(command)
    if network is not None:
        return f"{network} needs the network, which the sandbox does not allow"
    return None
