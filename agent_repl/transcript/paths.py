"""Where a session's files live (docs/architecture.md 9.3).

    <home>/projects/<project slug>/<session_id>.jsonl         the transcript
    <home>/projects/<project slug>/<session_id>/tool-results/ persisted tool outputs
    <home>/projects/<project slug>/<session_id>/subagents/    sub-agents' sidechain transcripts

The slug is the working directory with `/` replaced by `-`, as Claude Code names its project
directories, so `/home/ann/proj` becomes `-home-ann-proj`. Nothing here reads the environment:
the caller passes the `AGENT_REPL_HOME` value (or None) in.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

# Re-exported: the transcript writer and session memory create their directories with it.
from agent_repl.core.tooling.persisted_output import ensure_private_dir as ensure_private_dir

FILE_MODE = 0o600

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


def write_private_text(path: Path, text: str) -> None:
    """Write `path` so that only its owner may read it (0600 whatever the umask, and a file that
    was there with a wider mode is narrowed); a symlink in its place is refused (OSError)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.fchmod(fd, FILE_MODE)
        handle.write(text)


def resolve_home(agent_repl_home: str | None) -> Path:
    """`<home>`: the given `AGENT_REPL_HOME` value, or `~/.agent_repl` when it is unset or empty."""
    if agent_repl_home:
        return Path(agent_repl_home).expanduser()
    return Path.home() / ".agent_repl"


def project_slug(cwd: str | Path) -> str:
    """The project directory name for `cwd`: every path separator (and a drive colon) becomes `-`."""
    return re.sub(r"[/\\:]", "-", str(cwd))


def project_dir(home: Path, cwd: str | Path) -> Path:
    return home / "projects" / project_slug(cwd)


def is_valid_session_id(session_id: str) -> bool:
    """Session ids become file names, so only letters, digits, `-` and `_` are allowed."""
    return bool(_SESSION_ID.match(session_id))


@dataclass(frozen=True)
class SessionPaths:
    """The files of one session, from the home directory, the working directory and the session id."""

    home: Path
    cwd: Path
    session_id: str

    def __post_init__(self) -> None:
        if not is_valid_session_id(self.session_id):
            raise ValueError(f"invalid session id {self.session_id!r}: use letters, digits, '-' and '_'")

    @property
    def project_dir(self) -> Path:
        return project_dir(self.home, self.cwd)

    @property
    def transcript(self) -> Path:
        return self.project_dir / f"{self.session_id}.jsonl"

    @property
    def session_dir(self) -> Path:
        return self.project_dir / self.session_id

    @property
    def tool_results_dir(self) -> Path:
        return self.session_dir / "tool-results"

    @property
    def subagents_dir(self) -> Path:
        return self.session_dir / "subagents"

    def subagent_transcript(self, agent_id: str) -> Path:
        return self.subagents_dir / f"agent-{agent_id}.jsonl"

    def ensure_project_dir(self) -> Path:
        return ensure_private_dir(self.project_dir)

