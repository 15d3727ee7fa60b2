"""Markdown files with YAML front matter, as Claude Code's commands and skills are written, and the
folders they are read from (the user's `~/.claude/<kind>`, `~/.agent_repl/<kind>`, the project's
`.claude/<kind>` and `.agent_repl/<kind>`).

The front matter people write is not always strict YAML: `argument-hint: [file] [line]` is a
common line that YAML refuses. Such a block is read again as plain `key: value` lines; only what
neither reading accepts is an error, and the error names the line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n?---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.DOTALL)
_PLAIN_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)[ \t]*:[ \t]*(.*)$")

Scope = Literal["user", "project"]


class FrontMatterError(ValueError):
    """What is wrong with a file's front matter (the caller adds the file's name)."""


def split_front_matter(text: str, *, required: bool = False) -> tuple[dict[str, Any], str]:
    """The front matter's fields and the body; a file without front matter is all body (unless
    `required`)."""
    text = text.lstrip("\ufeff")
    match = _FRONT_MATTER.match(text)
    if match is None:
        if required or text.startswith("---"):
            raise FrontMatterError("no front matter: the file must start with a --- line, the fields, and another --- line")
        return {}, text
    block, body = match.group(1), match.group(2)
    import yaml  # here, not at import: most sessions have no such file to read

    try:
        data = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as exc:
        data = _plain_fields(block)
        if data is None:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 2}" if mark is not None else ""
            raise FrontMatterError(f"the front matter is not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontMatterError("the front matter must be `key: value` lines")
    return {str(k): v for k, v in data.items()}, body


def _plain_fields(block: str) -> dict[str, Any] | None:
    """`key: value` lines read as text; None when a line is not one."""
    fields: dict[str, Any] = {}
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _PLAIN_LINE.match(line)
        if match is None:
            return None
        fields[match.group(1)] = match.group(2).strip()
    return fields


def text_field(data: Mapping[str, Any], name: str) -> str | None:
    """A field that must be text (a number is taken as its text; a YAML list of words is joined as
    they were written, `[file]` for `argument-hint: [file]`)."""
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool):
        raise FrontMatterError(f"`{name}` must be text")
    if isinstance(value, (str, int, float)):
        return str(value).strip()
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return "[" + ", ".join(str(v) for v in value) + "]"
    raise FrontMatterError(f"`{name}` must be text")


def names_field(data: Mapping[str, Any], name: str) -> tuple[str, ...]:
    """A comma-separated string or a YAML list of names (`allowed-tools`)."""
    value = data.get(name)
    if value is None:
        return ()
    if isinstance(value, str):
        parts = _split_top_level_commas(value)
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        parts = list(value)
    else:
        raise FrontMatterError(f"`{name}` must be a comma-separated string or a list of names")
    return tuple(p.strip() for p in parts if p.strip())


def _split_top_level_commas(text: str) -> list[str]:
    """`Bash(git add:*), Read` -> two parts; a comma inside parentheses stays in its part."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return parts


def claude_home(env: Mapping[str, str]) -> Path:
    """Claude Code's folder of the user: `$CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    configured = env.get("CLAUDE_CONFIG_DIR")
    if configured:
        return Path(configured).expanduser()
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".claude"


@dataclass(frozen=True)
class SourceDir:
    path: Path
    scope: Scope


def source_dirs(kind: str, *, home: Path, claude: Path, cwd: Path) -> list[SourceDir]:
    """Where files of `kind` ("commands", "skills") are read from, lowest precedence first: the
    user's (Claude Code's, then agent-repl's), then the project's (likewise)."""
    return [
        SourceDir(claude / kind, "user"),
        SourceDir(home / kind, "user"),
        SourceDir(cwd / ".claude" / kind, "project"),
        SourceDir(cwd / ".agent_repl" / kind, "project"),
    ]


def project_markdown(cwd: Path, kind: str) -> list[Path]:
    """The project's Markdown files of `kind` (under `.claude/<kind>` and `.agent_repl/<kind>`),
    relative to it: what the trust question names as waiting for the folder's trust."""
    found: list[Path] = []
    for base in (cwd / ".claude" / kind, cwd / ".agent_repl" / kind):
        if base.is_dir():
            found.extend(sorted(p.relative_to(cwd) for p in base.rglob("*.md") if p.is_file()))
    return found
