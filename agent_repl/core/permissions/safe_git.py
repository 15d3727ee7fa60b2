"""The one way the agent runs git on its own behalf: with nothing the repository configures.

A repository's `.git/config` (and the files it includes) can name commands git runs by itself:
an fsmonitor hook on every status, hooks (`core.hooksPath`, `post-index-change` when the index is
rewritten), clean/smudge filters when a file is hashed, an ssh command or credential helper when a
partial clone fetches a missing object, a pager. A folder the user has not trusted, or a model
that wrote that file, must not get code run that way. So every git call here:

- starts from an environment holding only PATH, HOME and the locale, with no `GIT_*` variable
  from outside (`GIT_DIR`, `GIT_CONFIG_PARAMETERS`, `GIT_SSH_COMMAND`, ... could re-enable any of
  it), with no system or global config (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`),
  no terminal prompt and no optional locks (status then never rewrites the index);
- overrides on the command line every setting that runs something (command-line settings win
  over every config file): fsmonitor off, hooks from an empty place, no pager, no external diff,
  no ssh command or credential helper, no transport at all (`protocol.allow=never`, so a lazy
  fetch cannot start), and every filter driver the config defines emptied and made optional
  (read first with `git config`, which runs nothing);
- runs in a session of its own (no controlling terminal, so no config include can read the
  user's keystrokes from `/dev/tty`), with its input closed and a time limit after which its
  whole process group is killed.

Status is asked with `--no-renames` and `--ignore-submodules=all` (a submodule is another
repository with its own config). Both questions git answers here only read.

The filter names are read in one git process and used in the next: a filter added to the config
in between would run. Only a writer of `.git/config` (or of a file it includes) could do that,
and the agent's own writes there always ask first.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

TIMEOUT_S = 5.0
# What a git call keeps of the agent's environment: enough to find git and to print paths.
KEPT_ENVIRONMENT = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")
FIXED_ENVIRONMENT = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_NO_REPLACE_OBJECTS": "1",
}
# Settings that make git run a command, each set to a value that runs nothing.
NEUTRAL_SETTINGS = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("core.sshCommand", "false"),
    ("core.askPass", "false"),
    ("core.editor", "false"),
    ("core.alternateRefsCommand", ""),
    ("core.untrackedCache", "false"),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("protocol.allow", "never"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("status.submoduleSummary", "false"),
    ("color.ui", "false"),
)
_FILTER_COMMANDS = ("clean", "smudge", "process")


@dataclass(frozen=True)
class GitResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def git_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every git call: a few harmless variables of ours and git's own switches."""
    source = os.environ if environ is None else environ
    env = {name: source[name] for name in KEPT_ENVIRONMENT if name in source}
    env.setdefault("PATH", os.defpath)
    env.update(FIXED_ENVIRONMENT)
    return env


def _settings_arguments(settings: Sequence[tuple[str, str]]) -> list[str]:
    arguments: list[str] = []
    for key, value in settings:
        arguments += ["-c", f"{key}={value}"]
    return arguments


def _run(cwd: Path, arguments: Sequence[str], env: Mapping[str, str], timeout: float) -> GitResult | None:
    command = ["git", "--no-pager", "--no-optional-locks", *_settings_arguments(NEUTRAL_SETTINGS), *arguments]
    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError:
        return None
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
        process.communicate()
        return None
    return GitResult(process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def filter_drivers(cwd: Path, timeout: float = TIMEOUT_S) -> list[str] | None:
    """The names of the filter drivers the repository's config defines (None when git cannot say)."""
    done = _run(cwd, ["config", "--null", "--get-regexp", r"^filter\."], git_environment(), timeout)
    if done is None or done.returncode not in (0, 1):  # 1: no such setting
        return None
    names: list[str] = []
    for entry in done.stdout.split("\0"):
        key = entry.split("\n", 1)[0]
        section, _, rest = key.partition(".")
        name, dot, _ = rest.rpartition(".")
        if section.lower() == "filter" and dot and name not in names:
            names.append(name)
    return names


def _filter_overrides(names: Sequence[str]) -> dict[str, str]:
    """Every named filter emptied and optional, passed as environment settings (a driver's name
    may hold `=` or spaces, which `-c key=value` could not carry)."""
    settings = [(f"filter.{name}.{command}", "") for name in names for command in _FILTER_COMMANDS]
    settings += [(f"filter.{name}.required", "false") for name in names]
    env = {"GIT_CONFIG_COUNT": str(len(settings))}
    for i, (key, value) in enumerate(settings):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def run_git(cwd: Path, *arguments: str, timeout: float = TIMEOUT_S) -> GitResult | None:
    """Run `git ARGUMENTS` in `cwd` with nothing the repository configures able to run; None when
    git is missing, timed out, or the repository's filters could not be read first."""
    drivers = filter_drivers(cwd, timeout)
    if drivers is None:
        return None
    env = {**git_environment(), **_filter_overrides(drivers)}
    return _run(cwd, arguments, env, timeout)


def git_branch(cwd: Path) -> str | None:
    """The current branch (`HEAD` when detached), or None outside a repository."""
    done = run_git(cwd, "rev-parse", "--abbrev-ref", "HEAD")
    return done.stdout.strip() if done is not None and done.ok else None


def git_status(cwd: Path) -> list[str] | None:
    """`git status --short` lines, or None when git cannot say."""
    done = run_git(cwd, "status", "--short", "--no-renames", "--ignore-submodules=all")
    return done.stdout.splitlines() if done is not None and done.ok else None
