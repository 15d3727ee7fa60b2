"""Saving an "always allow" answer to the project's `./.agent_repl/settings.json`.

The file may hold other settings and rules; they are kept as they are. A file that is not a
JSON object is never overwritten: the caller shows the error and the rule stays in memory only.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


class AllowRuleError(Exception):
    """The rule could not be saved; the message says which file and why."""


def project_settings_path(cwd: Path) -> Path:
    return cwd / ".agent_repl" / "settings.json"


def persist_allow_rule(cwd: Path, rule: str) -> Path:
    """Add `rule` to `permissions.allow` of the project settings (once); returns the file."""
    path = project_settings_path(cwd)
    data: dict = {}
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raw = ""
    except OSError as exc:
        raise AllowRuleError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if raw.strip():
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise AllowRuleError(
                f"{path} is not valid JSON (line {exc.lineno}); rule {rule} not saved"
            ) from exc
        if not isinstance(data, dict):
            raise AllowRuleError(f"{path} is not a JSON object; rule {rule} not saved")
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise AllowRuleError(f"{path}: `permissions` is not an object; rule {rule} not saved")
    allow = permissions.setdefault("allow", [])
    if not isinstance(allow, list):
        raise AllowRuleError(f"{path}: `permissions.allow` is not a list; rule {rule} not saved")
    if rule in allow:
        return path
    allow.append(rule)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".json", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except OSError as exc:
        raise AllowRuleError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path
