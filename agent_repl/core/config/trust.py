"""Workspace trust: whether this user has said a folder's own settings may grant anything.

A cloned repository can carry `.agent_repl/settings.json`, `.mcp.json`, agent definitions and the
scripts its hooks and MCP servers run. Nothing of it takes effect until the user trusted the
folder (deny rules need no trust: a file can always take permissions away), and the trust holds
for what the folder said then: the record keeps a digest of each grant-bearing file
(`grant_files`), and when one is changed, added or removed the next session asks again and shows
which. The record lives in `<home>/trusted-folders.json`, private to the user.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TRUST_FILE = "trusted-folders.json"
# Files and folders of a project that grant things, relative to it.
GRANT_PATHS = (
    ".agent_repl",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/agents",
    ".claude/commands",
    ".claude/skills",
    ".mcp.json",
)
# Files those may name as the program they run (hook scripts, MCP servers), read as JSON.
_CONFIG_FILES = (".agent_repl/settings.json", ".claude/settings.json", ".claude/settings.local.json", ".mcp.json")
_MAX_FILES = 2_000
_MAX_CONFIG_BYTES = 1024 * 1024
# Programs that run the file they are given (`sh hook.sh`, `python3 server.py`).
_INTERPRETERS = frozenset({"sh", "bash", "zsh", "dash", "python", "node", "deno", "bun", "ruby", "perl",
                           "php", "uv", "npx", "tsx", "ts-node"})  # fmt: skip
_PROJECT_DIR_VARIABLE = re.compile(r"\$\{?(?:CLAUDE_PROJECT_DIR|AGENT_REPL_PROJECT_DIR)\}?")


class TrustError(Exception):
    """The trust file cannot be written; the message names it."""


def _digest(path: Path) -> str | None:
    try:
        with path.open("rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


def _regular_inside(path: Path, folder: Path) -> bool:
    real = Path(os.path.realpath(path))
    return (real == folder or folder in real.parents) and real.is_file()


def _walk(directory: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(directory):  # symlinked folders are not followed
        dirs.sort()
        for name in sorted(files):
            yield Path(root) / name


def _programs(data: Any) -> Iterator[list[str]]:
    """The command lines a settings file or `.mcp.json` runs, as words: hooks, the status line,
    MCP servers."""
    if not isinstance(data, dict):
        return
    hooks = data.get("hooks")
    for entries in hooks.values() if isinstance(hooks, dict) else []:
        for entry in entries if isinstance(entries, list) else []:
            for hook in entry.get("hooks", []) if isinstance(entry, dict) else []:
                if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                    yield from _shell_commands(hook["command"])
    for key in ("statusLine", "status_line"):
        status = data.get(key)
        if isinstance(status, dict) and isinstance(status.get("command"), str):
            yield from _shell_commands(status["command"])
    for key in ("mcpServers", "mcp_servers"):
        servers = data.get(key)
        for server in servers.values() if isinstance(servers, dict) else []:
            if isinstance(server, dict) and isinstance(server.get("command"), str):
                args = [arg for arg in server.get("args") or [] if isinstance(arg, str)]
                yield [server["command"], *args]


def _shell_commands(line: str) -> Iterator[list[str]]:
    """The simple commands of a hook's shell line, split at its operators (`;`, `&&`, `|`...)."""
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        words = line.split()
    command: list[str] = []
    for word in words:
        if word and set(word) <= set("();<>|&"):
            if command:
                yield command
            command = []
        else:
            command.append(word)
    if command:
        yield command


def _run_file(words: list[str]) -> list[str]:
    """The words of a command that name the file it runs: the program itself, and for an
    interpreter the script it is given (its first argument that is not an option)."""
    if not words:
        return []
    named = [words[0]]
    if os.path.basename(words[0]).rstrip("0123456789.") in _INTERPRETERS:
        script = next((word for word in words[1:] if not word.startswith("-")), None)
        if script is not None:
            named.append(script)
    return named


def _named_scripts(folder: Path) -> Iterator[Path]:
    """Files inside the folder that its hooks and MCP servers run (a script, or a server's program)."""
    for relative in _CONFIG_FILES:
        path = folder / relative
        if not _regular_inside(path, folder) or path.stat().st_size > _MAX_CONFIG_BYTES:
            continue  # a link out of the folder or a device is recorded, never read
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for words in _programs(data):
            for word in _run_file(words):
                word = _PROJECT_DIR_VARIABLE.sub(str(folder), word)
                candidate = Path(word) if os.path.isabs(word) else folder / word
                if "\0" not in word and _regular_inside(candidate, folder):
                    yield candidate


def grant_files(folder: Path, home: Path | None = None) -> dict[str, str]:
    """Each grant-bearing file of `folder` (relative path) and its sha256: settings, agent
    definitions, `.mcp.json`, and the scripts their hooks and MCP servers run.

    When the folder's `.agent_repl/` is the agent's own `home` (agent-repl run in the home
    folder), only its settings and agents count, not the sessions it keeps there."""
    folder = Path(os.path.realpath(folder))
    found: dict[str, str] = {}
    store = Path(os.path.realpath(home)) if home is not None else None

    def add(path: Path) -> None:
        if len(found) >= _MAX_FILES:
            return
        real = Path(os.path.realpath(path))
        if real != folder and folder not in real.parents:
            # A link out of the folder: what it points at is recorded, never read (it may be a device).
            digest: str | None = hashlib.sha256(f"link to {real}".encode()).hexdigest()
        else:
            digest = _digest(path) if path.is_file() else None
        if digest is not None:
            found[os.path.relpath(path, folder)] = digest

    for relative in GRANT_PATHS:
        path = folder / relative
        if store is not None and Path(os.path.realpath(path)) == store:
            for name in ("settings.json", "agents"):
                inner = path / name
                for file in _walk(inner) if inner.is_dir() and not inner.is_symlink() else [inner]:
                    if file.exists():
                        add(file)
            continue
        if path.is_dir() and not path.is_symlink():
            for file in _walk(path):
                add(file)
        elif path.exists():
            add(path)
    for script in _named_scripts(folder):
        add(script)
    return dict(sorted(found.items()))


def describe_changes(before: dict[str, str], now: dict[str, str]) -> list[str]:
    """What changed between two `grant_files` results, one short phrase a file."""
    changes = []
    for name in sorted({*before, *now}):
        if name not in before:
            changes.append(f"{name} added")
        elif name not in now:
            changes.append(f"{name} removed")
        elif before[name] != now[name]:
            changes.append(f"{name} changed")
    return changes


@dataclass(frozen=True)
class TrustStatus:
    """Whether the folder is trusted as it is now; `changes` says what moved since it was trusted
    (empty when it never was, or nothing did)."""

    trusted: bool
    changes: tuple[str, ...] = ()
    # The grant files as they were read for this answer (None when not read: a `--trust-project` run).
    files: dict[str, str] | None = None


@dataclass(frozen=True)
class WorkspaceTrust:
    home: Path

    @property
    def path(self) -> Path:
        return self.home / TRUST_FILE

    def _records(self) -> dict[str, dict[str, str]]:
        """Folder -> the grant files it had when trusted. A folder remembered by an older version
        (a bare path, with no files) counts as trusted with nothing recorded: it is asked again."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # unreadable or broken: nothing is trusted, so everything is asked again
        if not isinstance(data, dict):
            return {}
        records: dict[str, dict[str, str]] = {}
        legacy = data.get("folders")
        for folder in legacy if isinstance(legacy, list) else []:
            if isinstance(folder, str):
                records[folder] = {}
        trusted = data.get("trusted")
        for folder, record in trusted.items() if isinstance(trusted, dict) else []:
            files = record.get("files") if isinstance(record, dict) else None
            if isinstance(files, dict):
                records[folder] = {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)}
        return records

    def status(self, folder: Path) -> TrustStatus:
        record = self._records().get(str(folder.resolve()))
        files = grant_files(folder, self.home)
        if record is None:
            return TrustStatus(False, files=files)
        changes = describe_changes(record, files)
        return TrustStatus(not changes, tuple(changes), files)

    def is_trusted(self, folder: Path) -> bool:
        return self.status(folder).trusted

    def trust(self, folder: Path, files: dict[str, str] | None = None) -> None:
        """Remember `folder` (exactly that folder, not its parents or children) with its grant
        files as they are now (or as `files` says they were when the user was asked)."""
        records = self._records()
        records[str(folder.resolve())] = grant_files(folder, self.home) if files is None else files
        self._write(records)

    def update_file(self, folder: Path, relative: str, before: str | None) -> None:
        """agent-repl itself rewrote one grant file for the user (a saved permission rule): the
        record follows, but only where it held the content just replaced (`before`'s digest)."""
        records = self._records()
        key = str(folder.resolve())
        record = records.get(key)
        if record is None or record.get(relative) != before:
            return
        digest = _digest(Path(key) / relative)
        if digest is None:
            record.pop(relative, None)
        else:
            record[relative] = digest
        self._write(records)

    def _write(self, records: dict[str, dict[str, str]]) -> None:
        data = {"trusted": {folder: {"files": files} for folder, files in sorted(records.items())}}
        try:
            self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".trust-", dir=self.home)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=2)
                f.write("\n")
            os.replace(tmp, self.path)
        except OSError as exc:
            raise TrustError(f"cannot remember the trusted folder in {self.path}: {exc.strerror or exc}") from exc


def file_digest(path: Path) -> str | None:
    """A file's sha256 as the trust record keeps it (None when it cannot be read)."""
    return _digest(path)


NOT_TRUSTED_NOTICE = (
    "this folder is not trusted: nothing it configures for itself applies this time (its allow rules, "
    "permission mode, model, hooks, MCP servers, agents...); its deny rules still do"
)


def untrusted_warning(cwd: Path, grants: list[str]) -> str:
    """The one line print mode shows when it ignores an untrusted folder's own settings."""
    return (
        f"warning: ignoring what {cwd} configures for itself, as this folder is not trusted: {'; '.join(grants)}; "
        "run agent-repl here once to trust it, or pass --trust-project"
    )


def allow_grants(rules: list[str]) -> list[str]:
    """How the trust question names the project's held-back allow rules."""
    return [f"allow {rule} (.agent_repl/settings.json)" for rule in rules]


def setting_grants(held_back: dict[str, Any], unknown: list[str] | None = None) -> list[str]:
    """How the trust question names the project's other held-back settings, with their values
    (and the keys it never takes from a project: unknown or user-only ones)."""
    return [
        *(f"{key} {json.dumps(value, default=_plain)} (.agent_repl/settings.json)" for key, value in held_back.items()),
        *(f"{key} (.agent_repl/settings.json; agent-repl never takes it from a project)" for key in unknown or []),
    ]


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else str(value)


def change_grants(changes: tuple[str, ...] | list[str]) -> list[str]:
    """The first entry of the question when the folder was trusted before and has changed since."""
    return [f"changed since you trusted this folder: {', '.join(changes)}"] if changes else []


def trust_question(cwd: Path, grants: list[str]) -> str:
    """What the trust dialog says, in both front ends; each grant names the file it comes from."""
    listed = "\n".join(f"  - {grant}" for grant in grants)
    return (
        f"{cwd} has settings of its own that wait for your answer:\n{listed}\n"
        "A folder's own settings take effect only once you trust it: a cloned repository could approve "
        "its own commands this way. Trust this folder? (Deny rules apply either way.)"
    )
