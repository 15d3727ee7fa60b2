"""What a sandboxed command may touch: the settings, and the paths they come to for one session.

Writes: the project, the folders the user added, the temporary directory, and the paths settings
name. Reads: everywhere except the user's secrets and the agent's own store (the current
session's tool results excepted, since the model has seen them). TCP connections: only to the
ports settings allow.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# Under the user's home: keys, cloud and registry credentials, other agents' transcripts.
SECRET_HOME_PATHS = (
    ".ssh", ".aws", ".gnupg", ".azure", ".kube", ".docker", ".config/gcloud", ".config/gh", ".config/hub",
    ".config/doctl", ".config/op", ".oci", ".password-store", ".netrc", ".git-credentials", ".npmrc",
    ".pypirc", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".terraform.d",
    ".vault-token", ".claude", ".codex", ".local/share/keyrings", ".mozilla", ".config/google-chrome",
    ".config/chromium",
)  # fmt: skip
# Devices any command may write: output that goes nowhere, terminals and shared memory.
WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm")


class SandboxSettings(BaseModel):
    """The `sandbox` key of a settings file; Claude Code's names are read too."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    # Run Bash commands in the OS sandbox where the system offers one.
    enabled: bool = True
    # Sandboxed commands run without a question (those that need the network or write outside still ask).
    auto_allow: bool = Field(default=False, alias="autoAllowBashIfSandboxed")
    # Whether the model may ask to run a command outside the sandbox (always asked of the user).
    allow_unsandboxed: bool = Field(default=True, alias="allowUnsandboxedCommands")
    allow_write: list[str] = Field(default_factory=list)
    deny_read: list[str] = Field(default_factory=list)
    allow_ports: list[int] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _claude_code_names(cls, data: Any) -> Any:
        # Claude Code nests the paths: {"filesystem": {"allowWrite": [...], "denyRead": [...]}}.
        if isinstance(data, dict) and isinstance(data.get("filesystem"), dict):
            data = dict(data)
            fs = data.pop("filesystem")
            extra = sorted(set(fs) - {"allowWrite", "denyRead"})
            if extra:
                raise ValueError(f"filesystem: unknown key(s) {', '.join(extra)}; known: allowWrite, denyRead")
            data["allow_write"] = [*data.get("allow_write", []), *fs.get("allowWrite", [])]
            data["deny_read"] = [*data.get("deny_read", []), *fs.get("denyRead", [])]
        return data

    @field_validator("allow_ports")
    @classmethod
    def _ports(cls, ports: list[int]) -> list[int]:
        for port in ports:
            if not 1 <= port <= 65535:
                raise ValueError(f"{port} is not a TCP port (1-65535)")
        return sorted(set(ports))


def _expand(path: str, home: Path, project: Path) -> Path:
    p = Path(os.path.expandvars(path.replace("~", str(home), 1) if path.startswith("~") else path))
    return (p if p.is_absolute() else project / p).resolve()


@dataclass(frozen=True)
class SandboxPolicy:
    """The paths and ports of one session's sandbox, resolved."""

    write_roots: tuple[Path, ...]
    # The temporary directory (one of the write roots): where Bash keeps its small side files.
    temp_dir: Path
    deny_read: tuple[Path, ...]
    # Readable although inside a denied path (this session's tool results).
    read_exceptions: tuple[Path, ...]
    allow_ports: tuple[int, ...]

    @classmethod
    def build(
        cls,
        settings: SandboxSettings,
        *,
        project: Path,
        added_dirs: Iterable[Path] = (),
        home: Path | None = None,
        agent_home: Path | None = None,
        tool_results_dir: Path | None = None,
        temp_dir: Path | None = None,
    ) -> SandboxPolicy:
        home = (home or Path.home()).resolve()
        project = project.resolve()
        tmp = (temp_dir or Path(tempfile.gettempdir())).resolve()
        writes = [project, *(Path(d).resolve() for d in added_dirs), tmp]
        writes += [_expand(p, home, project) for p in settings.allow_write]
        denied = [home / p for p in SECRET_HOME_PATHS]
        if agent_home is not None:
            denied.append(agent_home.resolve())
        denied += [_expand(p, home, project) for p in settings.deny_read]
        exceptions = (tool_results_dir.resolve(),) if tool_results_dir is not None else ()
        return cls(
            tuple(dict.fromkeys(writes)), tmp, tuple(dict.fromkeys(denied)), exceptions, tuple(settings.allow_ports)
        )

    def may_write(self, path: Path) -> bool:
        path = Path(os.path.abspath(path))
        return any(path == root or root in path.parents for root in self.write_roots) or str(path) in WRITABLE_DEVICES

    def may_read(self, path: Path) -> bool:
        path = Path(os.path.abspath(path))
        if any(path == e or e in path.parents for e in self.read_exceptions):
            return True
        return not any(path == d or d in path.parents for d in self.deny_read)


def readable_grants(policy: SandboxPolicy, root: Path = Path("/")) -> list[Path]:
    """The smallest set of paths whose subtrees hold everything readable: the siblings of each
    denied path and of its ancestors (Landlock only allows, so "all but X" is X's siblings)."""
    denied = [d for d in policy.deny_read if os.path.lexists(d)]
    grants: list[Path] = []

    def walk(directory: Path) -> None:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            path = Path(entry.path)
            if path in policy.read_exceptions:
                grants.append(path)
                continue
            inside_denied = any(path == d or d in path.parents for d in denied)
            holds_denied = any(path in d.parents for d in denied)
            holds_exception = any(path in e.parents for e in policy.read_exceptions)
            if inside_denied and not holds_exception:
                continue
            if holds_denied or (inside_denied and holds_exception):
                if entry.is_dir(follow_symlinks=False):
                    walk(path)
                continue
            if entry.is_symlink():
                target = Path(os.path.realpath(path))
                if any(target == d or d in target.parents or target in d.parents for d in denied):
                    continue  # a link into (or above) a secret grants nothing
            grants.append(path)

    walk(root)
    return grants
