"""Workspace trust: whether this user has said a folder's own settings may grant anything.

A cloned repository can carry `.agent_repl/settings.json`; what it allows (permission rules,
MCP servers, hooks) takes effect only once the user has trusted that folder. The
answer is kept per folder in `<home>/trusted-folders.json`, private to the user. Deny rules need
no trust: a file can always take permissions away.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

TRUST_FILE = "trusted-folders.json"


class TrustError(Exception):
    """The trust file cannot be written; the message names it."""


@dataclass(frozen=True)
class WorkspaceTrust:
    home: Path

    @property
    def path(self) -> Path:
        return self.home / TRUST_FILE

    def _folders(self) -> list[str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []  # unreadable or broken: nothing is trusted, so everything is asked again
        folders = data.get("folders") if isinstance(data, dict) else None
        return [f for f in folders if isinstance(f, str)] if isinstance(folders, list) else []

    def is_trusted(self, folder: Path) -> bool:
        return str(folder.resolve()) in self._folders()

    def trust(self, folder: Path) -> None:
        """Remember `folder` (exactly that folder, not its parents or children)."""
        folders = self._folders()
        key = str(folder.resolve())
        if key in folders:
            return
        try:
            self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".trust-", dir=self.home)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"folders": [*folders, key]}, f, indent=2)
                f.write("\n")
            os.replace(tmp, self.path)
        except OSError as exc:
            raise TrustError(f"cannot remember the trusted folder in {self.path}: {exc.strerror or exc}") from exc


def untrusted_warning(cwd: Path, rules: list[str]) -> str:
    """The one line print mode shows when it ignores a project's allow rules."""
    settings = cwd / ".agent_repl" / "settings.json"
    return (
        f"warning: ignoring {len(rules)} allow rule(s) in {settings} ({', '.join(rules)}): this folder is not "
        "trusted; run agent-repl here once to trust it, or pass --trust-project"
    )


def allow_grants(rules: list[str]) -> list[str]:
    """How the trust question names the project's held-back allow rules."""
    return [f"allow {rule} (.agent_repl/settings.json)" for rule in rules]


def trust_question(cwd: Path, grants: list[str]) -> str:
    """What the trust dialog says, in both front ends; each grant names the file it comes from."""
    return (
        f"{cwd} has settings of its own that wait for your answer: {'; '.join(grants)}\n"
        "A folder's own settings take effect only once you trust it: a cloned repository could approve "
        "its own commands this way. Trust this folder? (Deny rules apply either way.)"
    )
