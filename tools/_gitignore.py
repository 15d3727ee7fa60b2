"""Gitignore rules for a directory walk (Glob), with the precedence git uses.

A walk carries a chain of (directory, rules) pairs, outermost first; the deepest rule that says
anything about a path decides. Ignored directories are pruned, so their contents never show up.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

IgnoreChain = tuple[tuple[str, "GitIgnoreSpec"], ...]


def _load(path: str) -> GitIgnoreSpec | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read(1_000_000).splitlines()
    except OSError:
        return None
    from pathspec import GitIgnoreSpec  # only once a walk meets an ignore file

    spec = GitIgnoreSpec.from_lines(lines)
    return spec if any(p.include is not None for p in spec.patterns) else None


def find_repo_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` that holds a `.git` entry."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


def extend_chain(chain: IgnoreChain, directory: str) -> IgnoreChain:
    """`chain` plus `directory/.gitignore` when that file exists."""
    spec = _load(os.path.join(directory, ".gitignore"))
    return chain + ((directory, spec),) if spec else chain


def initial_chain(root: Path) -> IgnoreChain:
    """The rules in force at `root`, before its own .gitignore: the repository's
    `.git/info/exclude` and every .gitignore from the repository root down to `root`'s parent."""
    repo = find_repo_root(root)
    if repo is None:
        return ()
    chain: IgnoreChain = ()
    exclude = _load(str(repo / ".git" / "info" / "exclude"))
    if exclude:
        chain += ((str(repo), exclude),)
    for directory in reversed(root.parents):
        if directory == repo or repo in directory.parents:
            chain = extend_chain(chain, str(directory))
    return chain


def is_ignored(chain: IgnoreChain, path: str, is_dir: bool) -> bool:
    """Whether `path` (absolute, below every directory in `chain`) is ignored."""
    for base, spec in reversed(chain):
        rel = path[len(base) :].lstrip("/")
        result = spec.check_file(rel + "/" if is_dir else rel)
        if result.include is not None:
            return result.include
    return False
