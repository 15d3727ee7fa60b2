"""Saving permission rules (an "always allow" answer, /permissions) to `./.agent_repl/settings.json`.

The file may hold other settings and rules; they are kept as they are. A file that is not a
JSON object is never overwritten: the caller shows the error and the rule stays in memory only.
Saving a rule in a trusted folder keeps it trusted (the trust record follows the user's own change).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from agent_repl.core.config.trust import TrustError, WorkspaceTrust, file_digest
from agent_repl.core.permissions.credentials import home_from_env


class AllowRuleError(Exception):
    """The rule could not be saved; the message says which file and why."""


def project_settings_path(cwd: Path) -> Path:
    return cwd / ".agent_repl" / "settings.json"


def _read_settings(path: Path, rule: str) -> dict:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise AllowRuleError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise AllowRuleError(f"{path} is not valid JSON (line {exc.lineno}); rule {rule} not saved") from exc
    if not isinstance(data, dict):
        raise AllowRuleError(f"{path} is not a JSON object; rule {rule} not saved")
    return data


def _rule_list(data: dict, path: Path, kind: str, rule: str) -> list:
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise AllowRuleError(f"{path}: `permissions` is not an object; rule {rule} not saved")
    rules = permissions.setdefault(kind, [])
    if not isinstance(rules, list):
        raise AllowRuleError(f"{path}: `permissions.{kind}` is not a list; rule {rule} not saved")
    return rules


def write_settings_file(path: Path, data: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".json", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except OSError as exc:
        raise AllowRuleError(f"cannot write {path}: {exc.strerror or exc}") from exc


def write_project_settings(cwd: Path, path: Path, data: dict) -> None:
    """Write the file for the user; a trusted folder stays trusted (the record follows this one
    change, and only if the file was as the record knew it)."""
    before = file_digest(path)
    write_settings_file(path, data)
    try:
        WorkspaceTrust(home_from_env(os.environ)).update_file(cwd, str(path.relative_to(cwd)), before)
    except TrustError:
        pass  # the folder is asked about again next time: nothing is granted by a failure here


def persist_rule(cwd: Path, rule: str, kind: str = "allow") -> Path:
    """Add `rule` to `permissions.allow` (or `deny`) of the project settings (once); returns the file."""
    path = project_settings_path(cwd)
    data = _read_settings(path, rule)
    rules = _rule_list(data, path, kind, rule)
    if rule not in rules:
        rules.append(rule)
        write_project_settings(cwd, path, data)
    return path


def persist_allow_rule(cwd: Path, rule: str) -> Path:
    return persist_rule(cwd, rule, "allow")


def remove_rule(cwd: Path, rule: str) -> bool:
    """Take `rule` out of the project settings' allow and deny lists; whether it was there."""
    path = project_settings_path(cwd)
    data = _read_settings(path, rule)
    found = False
    for kind in ("allow", "deny"):
        rules = data.get("permissions", {}).get(kind) if isinstance(data.get("permissions"), dict) else None
        if isinstance(rules, list) and rule in rules:
            rules[:] = [r for r in rules if r != rule]
            found = True
    if found:
        write_project_settings(cwd, path, data)
    return found
