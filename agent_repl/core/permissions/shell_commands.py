"""What a simple command runs besides its own program: the command a wrapper starts (`sudo`,
`timeout`, `xargs`, `find -exec` ...), the shell text `sh -c`, `eval` or `trap` are given, and
code that is not in the line at all (`source FILE`, `sh FILE`, a shell reading its stdin).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field

from agent_repl.core.permissions.shell_syntax import ShellLine, SimpleCommand, parse_line

MAX_DEPTH = 8
SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "fish"}
# Wrappers that only run their inner command (with another priority, time limit or buffering):
# an allow rule for the inner command approves them.
TRANSPARENT = {"time", "nice", "nohup", "timeout", "stdbuf", "command", "builtin", "exec", "setsid"}
# Options that take a separate argument, per wrapper; other options stand alone.
_OPTIONS_WITH_ARG = {
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "exec": {"-a"},
    "nice": {"-n", "--adjustment"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "stdbuf": {"-i", "-o", "-e", "--input", "--output", "--error"},
    "sudo": {"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host", "-p",
             "--prompt", "-r", "--role", "-t", "--type", "-U", "--other-user", "-T", "--command-timeout",
             "-R", "--chroot"},  # fmt: skip
    "doas": {"-u", "-C"},
    "xargs": {"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "--max-lines", "-n", "--max-args",
              "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var"},  # fmt: skip
    "watch": {"-n", "--interval", "-q", "--equexit"},
    "flock": {"-w", "--timeout", "-E", "--conflict-exit-code"},
    "su": {"-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment"},
    "runuser": {"-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell"},
    "shell": {"-o", "+o", "-O", "+O", "--rcfile", "--init-file"},
    "ionice": {"-c", "--class", "-n", "--classdata", "-t"},
    "strace": {"-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X"},
    "ltrace": {"-o", "-e", "-p", "-s", "-u", "-a", "-n", "-l", "-x"},
    "unshare": {"-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd"},
    "script": {"-E", "--echo", "-I", "--log-in", "-O", "--log-out", "-B", "--log-io", "-T", "--log-timing",
               "-m", "--logging-format", "-o", "--output-limit"},  # fmt: skip
}
_PLAIN_WRAPPERS = {"command", "builtin", "time", "nohup", "setsid", "busybox", "coproc", "sudo", "doas", "exec",
                   "nice", "stdbuf", "ionice", "strace", "ltrace", "unbuffer", "unshare"}  # fmt: skip
# Wrappers whose first word after the options is not the command: a CPU mask, a priority.
_ONE_ARG_WRAPPERS = {"taskset", "chrt"}


@dataclass
class Invocation:
    """One simple command and what it starts; positions index into `argv`."""

    argv: list[str | None]
    assignments: list[str | None] = field(default_factory=list)
    # (position of the inner command's name, what it runs).
    inner: list[tuple[int, Invocation]] = field(default_factory=list)
    # (position of the word holding the text, the parsed text or None when it is only known at run time).
    bodies: list[tuple[int, ShellLine | None]] = field(default_factory=list)
    transparent: bool = False
    # Files the command itself writes, named in its words (`find -fprint FILE`): judged like `>`.
    writes: list[str | None] = field(default_factory=list)
    # Code the line does not contain (`source FILE`, `sh FILE`, a shell reading an unknown stdin) and
    # the position of the word that names it (the file), if any.
    unseen: str | None = None
    unseen_at: int = 0
    # Started by xargs, which adds arguments read from its input: they are only known at run time.
    more_args_at_run_time: bool = False

    @property
    def name(self) -> str | None:
        return os.path.basename(self.argv[0]) if self.argv and self.argv[0] is not None else None

    def layers(self) -> list[Invocation]:
        """This command and every command it starts through wrappers (not through bodies)."""
        found = [self]
        for _, inner in self.inner:
            found.extend(inner.layers())
        return found


def invocation(command: SimpleCommand, depth: int = 0) -> Invocation:
    inv = _invocation(list(command.argv), depth, command)
    inv.assignments = [a.value for a in command.assignments]
    return inv


def _invocation(argv: list[str | None], depth: int, command: SimpleCommand | None = None) -> Invocation:
    inv = Invocation(argv)
    name = inv.name
    if name is None or depth > MAX_DEPTH:
        return inv
    if name in SHELLS:
        _shell(inv, depth, command)
    elif name in ("eval",):
        if len(argv) > 1:
            body = None if any(a is None for a in argv[1:]) else " ".join(a for a in argv[1:] if a is not None)
            inv.bodies.append((1, _parse(body, depth)))
    elif name == "alias":
        for i, word in enumerate(argv[1:], start=1):
            if word is None or "=" in word:
                inv.bodies.append((i, _parse(word.split("=", 1)[1], depth) if word else None))
    elif name in ("source", "."):
        inv.unseen, inv.unseen_at = f"{name} runs the file it is given", 1
    elif name == "trap":
        args = [a for a in argv[1:] if a not in ("--",)]
        if len(args) >= 2 and args[0] not in ("-", "-p", "-l", "-P"):
            inv.bodies.append((argv.index(args[0]), _parse(args[0], depth)))
    elif name == "find":
        _find(inv, depth)
    elif name == "env":
        _env(inv, depth)
    elif name == "timeout":
        start = _skip_options(argv, 1, _OPTIONS_WITH_ARG["timeout"])
        _wrap(inv, start + 1 if start is not None else None, depth, transparent=True)
    elif name == "xargs":
        start = _skip_options(argv, 1, _OPTIONS_WITH_ARG["xargs"], optional_arg={"-i", "-l", "-e"})
        if start is not None and start >= len(argv):
            inv.inner.append((start, Invocation(["echo"])))
        _wrap(inv, start, depth)
        for _, inner in inv.inner:
            inner.more_args_at_run_time = True
    elif name in ("watch",):
        start = _skip_options(argv, 1, _OPTIONS_WITH_ARG["watch"])
        if start is not None and start < len(argv):
            rest = argv[start:]
            if "-x" in argv[1:start] or "--exec" in argv[1:start]:
                _wrap(inv, start, depth)
            else:
                text = None if any(a is None for a in rest) else " ".join(a for a in rest if a is not None)
                inv.bodies.append((start, _parse(text, depth)))
    elif name in ("su", "runuser", "flock"):
        _dash_c(inv, depth, _OPTIONS_WITH_ARG[name])
    elif name == "chroot" or name in _ONE_ARG_WRAPPERS:
        start = _skip_options(argv, 1, set())
        _wrap(inv, start + 1 if start is not None else None, depth)
    elif name == "script":
        _dash_c(inv, depth, _OPTIONS_WITH_ARG["script"])
    elif name in _PLAIN_WRAPPERS:
        start = _skip_options(argv, 1, _OPTIONS_WITH_ARG.get(name, set()), numeric=name == "nice")
        if name == "sudo" and start is not None:
            while start < len(argv) and _is_assignment(argv[start]):
                start += 1
        if name == "command" and any(a in ("-v", "-V") for a in argv[1:start or 1]):
            return inv  # `command -v x` only says where x is
        _wrap(inv, start, depth, transparent=name in TRANSPARENT)
    return inv


def _parse(text: str | None, depth: int) -> ShellLine | None:
    """Shell text a command runs; each body is shorter than the line holding it, so nesting ends."""
    return None if text is None or depth > MAX_DEPTH else parse_line(text)


def _is_assignment(word: str | None) -> bool:
    if not word or "=" not in word:
        return False
    name = word.split("=", 1)[0]
    return name.isidentifier()


def _skip_options(argv: list[str | None], i: int, with_arg: set[str], *, optional_arg: frozenset[str] | set[str] = frozenset(),
                  numeric: bool = False) -> int | None:  # fmt: skip
    """The index of the first word after the options; None when an option is only known at run time."""
    while i < len(argv):
        word = argv[i]
        if word is None:
            return None
        if word == "--":
            return i + 1
        if not word.startswith("-") or word == "-":
            return i
        if word in with_arg:
            i += 2
            continue
        i += 1
        if numeric and word[1:].isdigit():
            continue
        if "=" in word or word[:2] in optional_arg:
            continue
    return i


def _wrap(inv: Invocation, start: int | None, depth: int, *, transparent: bool = False) -> None:
    if start is None:
        inv.inner.append((len(inv.argv), Invocation([None])))
        return
    if start < len(inv.argv):
        inv.inner.append((start, _invocation(inv.argv[start:], depth + 1)))
        inv.transparent = transparent


def _shell(inv: Invocation, depth: int, command: SimpleCommand | None) -> None:
    argv = inv.argv
    i, has_c = 1, False
    while i < len(argv):
        word = argv[i]
        if word is None:
            inv.bodies.append((i, None))
            return
        if word == "--" or not word.startswith(("-", "+")) or word in ("-", "+"):
            i += word == "--"
            break
        if word in _OPTIONS_WITH_ARG["shell"]:
            i += 2
            continue
        if not word.startswith("--") and "c" in word[1:]:
            has_c = True
        i += 1
    if has_c:
        # No text after -c: under xargs or find -exec it arrives at run time.
        inv.bodies.append((i, _parse(argv[i], depth) if i < len(argv) else None))
    elif i < len(argv):
        inv.unseen, inv.unseen_at = f"{inv.name} runs the script file it is given", i
    else:
        stdin = _stdin_of(command)
        if stdin is None:
            inv.unseen, inv.unseen_at = f"{inv.name} runs whatever arrives on its input", len(argv)
        else:
            inv.bodies.append((len(argv), _parse(stdin, depth)))


def _stdin_of(command: SimpleCommand | None) -> str | None:
    if command is None:
        return None
    fed = [r.body for r in command.redirects if r.operator.startswith("<<")]
    if any(r.operator == "<" for r in command.redirects) or (fed and (len(fed) > 1 or fed[0] is None)):
        return None
    return fed[0] if fed else command.stdin_text


def _dash_c(inv: Invocation, depth: int, with_arg: set[str]) -> None:
    """`su -c TEXT`, `runuser -c TEXT`, `flock FILE -c TEXT`; `runuser -u U -- cmd` and `flock FILE cmd`."""
    argv = inv.argv
    for i, word in enumerate(argv[1:], start=1):
        cluster = word is not None and word[:1] == "-" and word[1:].isalpha() and word.endswith("c")
        if (word in ("-c", "--command") or cluster) and i + 1 < len(argv):
            inv.bodies.append((i + 1, _parse(argv[i + 1], depth)))
            return
        if word is not None and word.startswith("--command="):
            inv.bodies.append((i, _parse(word.split("=", 1)[1], depth)))
            return
    start = _skip_options(argv, 1, with_arg)
    if inv.name == "flock" and start is not None:
        start += 1
    if inv.name not in ("su", "script") and start is not None and start < len(argv):
        _wrap(inv, start, depth)


def _find(inv: Invocation, depth: int) -> None:
    argv = inv.argv
    paths = []
    for word in argv[1:]:
        if word is None or word.startswith(("-", "(", "!")):
            break
        paths.append(word)
    i = 1
    while i < len(argv):
        word = argv[i]
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(argv)) if argv[j] in (";", "+")), len(argv))
            if i + 1 < end:
                inv.inner.append((i + 1, _invocation(argv[i + 1 : end], depth + 1)))
            i = end
        elif word == "-delete":
            inv.inner.append((i, Invocation(["rm", *paths])))
        elif word in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            inv.writes.append(argv[i + 1] if i + 1 < len(argv) else None)
            i += 1
        i += 1


def _env(inv: Invocation, depth: int) -> None:
    argv = inv.argv
    i = 1
    while i < len(argv):
        word = argv[i]
        if word is None:
            _wrap(inv, None, depth)
            return
        split_text: str | None = None
        if word in ("-S", "--split-string"):
            split_text, rest = (argv[i + 1] or "") if i + 1 < len(argv) else "", argv[i + 2 :]
        elif word.startswith(("--split-string=", "-S")):
            split_text, rest = word.split("=", 1)[1] if word.startswith("--") else word[2:], argv[i + 1 :]
        if split_text is not None:
            try:
                split: list[str | None] = list(shlex.split(split_text))
            except ValueError:
                split = [None]
            inv.inner.append((i, _invocation([*split, *rest], depth + 1)))
            return
        if word.startswith("-") and word != "-":
            i += 2 if word in _OPTIONS_WITH_ARG["env"] else 1
        elif word == "-" or _is_assignment(word):
            i += 1
        else:
            break
    _wrap(inv, i, depth)
