"""Credentials stay in the agent's memory: out of its environment, out of every process it starts.

A process's environment at exec time stays readable at `/proc/<pid>/environ` for its whole life,
to anything running as the same user (a Bash command reading `/proc/$PPID/environ`), and
changing `os.environ` later does not change it. So at start, when the agent's own credentials
(`AGENT_CREDENTIALS`, plus the names a settings file lists under `credential_env`) are in the
environment, `take_credentials` re-executes the program without them and hands their values to
the new image through a pipe that it reads once and closes. Every child then starts from an
environment without them (`child_environment`).

This module is imported before anything else at start, so it uses the standard library only.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Mapping, MutableMapping
from pathlib import Path

AGENT_CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
# The number of the inherited pipe the re-executed agent reads its credentials from.
HANDOFF_FD_VAR = "AGENT_REPL_CREDENTIALS_FD"
DEFAULT_HOME = "~/.agent_repl"
# A pipe holds this much without a reader; credentials are far smaller.
_PIPE_CAPACITY = 65_536
# Words in a variable's name that say it holds a secret (GITHUB_TOKEN, DB_PASSWORD, AWS_SECRET_ACCESS_KEY).
CREDENTIAL_WORDS = "SECRET|TOKEN|PASSWORD|PASSWD|APIKEY|API_KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL"
_CREDENTIAL_NAME = re.compile(r"(?:[A-Z0-9]+_)*(?:" + CREDENTIAL_WORDS + r")S?(?:_[A-Z0-9]+)*", re.IGNORECASE)


class CredentialError(Exception):
    """The credentials could not be handed over; the message says why."""


def home_from_env(env: Mapping[str, str]) -> Path:
    return Path(env.get("AGENT_REPL_HOME") or DEFAULT_HOME).expanduser()


def settings_files(cwd: Path, env: Mapping[str, str]) -> tuple[Path, Path]:
    """The user's settings file, then the project's (the project's wins where they differ)."""
    return home_from_env(env) / "settings.json", cwd / ".agent_repl" / "settings.json"


def named_in_settings(cwd: Path, env: Mapping[str, str]) -> list[str]:
    """`credential_env` from both settings files, read leniently (the full load reports errors later)."""
    names: list[str] = []
    for path in settings_files(cwd, env):
        if not path.is_file():
            continue  # absent, or a device or fifo that would never end
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        listed = data.get("credential_env") if isinstance(data, dict) else None
        if isinstance(listed, list):
            names += [name for name in listed if isinstance(name, str) and name]
    return names


def looks_like_credential(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret."""
    return bool(_CREDENTIAL_NAME.fullmatch(name))


def credential_names(extra: Iterable[str] = ()) -> frozenset[str]:
    return frozenset(AGENT_CREDENTIALS) | frozenset(extra)


def child_environment(names: Iterable[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a process the agent starts: its own, without the credentials."""
    source = os.environ if environ is None else environ
    removed = frozenset(names) | {HANDOFF_FD_VAR}
    return {key: value for key, value in source.items() if key not in removed}


def take_credentials(
    cwd: Path, environ: MutableMapping[str, str] | None = None, argv: list[str] | None = None
) -> dict[str, str]:
    """The credentials handed over by the previous image, re-executing first when some are still
    in the environment. Returns only on the re-executed side, or when exec itself failed (then the
    variables are at least removed from `os.environ`, and a warning says what is left)."""
    env = os.environ if environ is None else environ
    handed = receive(env)
    received = handed or {}
    names = credential_names(named_in_settings(cwd, env))
    present = {name: env[name] for name in sorted(names) if name in env}
    if not present:
        return received
    for name in present:
        del env[name]
    if handed is not None:
        # Re-executed already and still given some (a settings file changed in between): never loop.
        return {**received, **present}
    try:
        reexec_without(present, env, sys.orig_argv if argv is None else argv)
    except (OSError, CredentialError) as exc:
        print(
            f"agent-repl: warning: could not restart without the credentials in the environment ({exc}); "
            "commands will not get them, but /proc/<pid>/environ of this process still holds them",
            file=sys.stderr,
        )
    return {**received, **present}


def reexec_without(credentials: Mapping[str, str], env: Mapping[str, str], argv: list[str]) -> None:
    """Replace this process with the same command line, `credentials` sent through a pipe."""
    payload = json.dumps(dict(credentials)).encode("utf-8")
    if len(payload) > _PIPE_CAPACITY:
        raise CredentialError(f"the credentials are {len(payload)} bytes, more than a pipe holds")
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, payload)
    finally:
        os.close(write_end)
    os.set_inheritable(read_end, True)
    new_env = {key: value for key, value in env.items() if key not in credentials}
    new_env[HANDOFF_FD_VAR] = str(read_end)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, [sys.executable, *argv[1:]], new_env)
    except OSError:
        os.close(read_end)
        raise


def receive(env: MutableMapping[str, str]) -> dict[str, str] | None:
    """Read the handed-over credentials once and close the pipe; None when none were handed over."""
    number = env.pop(HANDOFF_FD_VAR, None)
    if number is None:
        return None
    try:
        fd = int(number)
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return None
    except (ValueError, OSError):
        return None
    chunks = []
    try:
        while chunk := os.read(fd, _PIPE_CAPACITY):
            chunks.append(chunk)
    finally:
        os.close(fd)
    try:
        data = json.loads(b"".join(chunks))
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items()}
