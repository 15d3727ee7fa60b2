"""A repository prepared by an attacker: every way its `.git/config` can make git run a command.

Each trap is a script that creates a marker file named after it in `markers` (outside the
repository, so the markers never show in its status). `plant_traps` turns an ordinary project
into such a repository, with a commit and a work tree whose files git must look at again
(their modification times differ from the index), so a status that obeys the config runs them.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "PATH": os.environ.get("PATH", os.defpath),
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "a",
    "GIT_AUTHOR_EMAIL": "a@example.invalid",
    "GIT_COMMITTER_NAME": "a",
    "GIT_COMMITTER_EMAIL": "a@example.invalid",
}
HOOK_NAMES = ("post-index-change", "pre-commit", "post-checkout", "reference-transaction", "pre-auto-gc")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env=GIT_ENV, capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout


def _script(path: Path, marker: Path) -> str:
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat\n")
    path.chmod(0o755)
    return str(path)


def markers_in(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir()) if markers.is_dir() else []


def init_repository(repo: Path) -> None:
    """An ordinary repository of `repo`'s files, with one commit."""
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")


def plant_traps(repo: Path, markers: Path) -> list[str]:
    """Poison `repo` (a git repository with a commit); the names of the traps it now holds."""
    markers.mkdir(parents=True, exist_ok=True)
    git_dir = repo / ".git"
    traps = git_dir / "traps"
    traps.mkdir()
    hooks = traps / "hooks"
    hooks.mkdir()
    for name in HOOK_NAMES:
        _script(hooks / name, markers / f"hook-{name}")
    fsmonitor = _script(traps / "fsmonitor", markers / "fsmonitor")
    clean = _script(traps / "clean", markers / "filter-clean")
    smudge = _script(traps / "smudge", markers / "filter-smudge")
    odd = _script(traps / "odd-clean", markers / "filter-odd-name")
    process = _script(traps / "process", markers / "filter-process")
    included = _script(traps / "included-clean", markers / "filter-included")
    pager = _script(traps / "pager", markers / "pager")
    ssh = _script(traps / "ssh", markers / "ssh-command")
    diff = _script(traps / "diff", markers / "external-diff")
    credential = _script(traps / "credential", markers / "credential-helper")
    (repo / ".gitattributes").write_text(
        "*.py filter=evil\n*.md filter=included\n*.txt filter=proc\n*.cfg filter=odd=name.x\n"
    )
    (repo / "notes.txt").write_text("notes\n")
    (repo / "settings.cfg").write_text("x = 1\n")
    git(repo, "add", "-A")  # before the config names any filter
    git(repo, "commit", "-q", "-m", "traps")
    (traps / "extra.cfg").write_text(f'[filter "included"]\n\tclean = {included}\n\trequired = true\n')
    with (git_dir / "config").open("a") as config:
        config.write(
            f"[core]\n\tfsmonitor = {fsmonitor}\n\thooksPath = {hooks}\n\tpager = {pager}\n"
            f"\tsshCommand = {ssh}\n\tuntrackedCache = true\n"
            f'[filter "evil"]\n\tclean = {clean}\n\tsmudge = {smudge}\n\trequired = true\n'
            f'[filter "odd=name.x"]\n\tclean = {odd}\n'
            f'[filter "proc"]\n\tprocess = {process}\n'
            f"[diff]\n\texternal = {diff}\n"
            f"[credential]\n\thelper = {credential}\n"
            f"[include]\n\tpath = traps/extra.cfg\n"
            f"[status]\n\tsubmoduleSummary = true\n"
        )
    # Every tracked file's time moves on (same size): git must read it again, through its filter.
    for path in repo.rglob("*"):
        if path.is_file() and ".git" not in path.relative_to(repo).parts:
            stat = path.stat()
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    for path in markers.iterdir():  # planting them must not count
        path.unlink()
    return [
        "fsmonitor",
        "hooksPath hooks",
        "filters",
        "included config",
        "pager",
        "ssh",
        "external diff",
        "credential",
    ]


def plant_lazy_fetch(repo: Path, markers: Path) -> None:
    """Make `repo` a partial clone missing its HEAD tree, whose promisor remote is reached by ssh:
    a git that fetches the missing object runs the repository's ssh command."""
    git(repo, "config", "core.repositoryformatversion", "1")
    git(repo, "config", "extensions.partialClone", "origin")
    git(repo, "config", "remote.origin.url", "ssh://attacker.invalid/repo.git")
    git(repo, "config", "remote.origin.promisor", "true")
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    (repo / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
