"""How Bash permission rules decide a command line, on its parse.

An allow rule approves a line only when nothing in it can run code the rule did not name: no
hazard in the parse, every redirection inside the project, and every simple command (with what
it starts through wrappers, `sh -c` or `eval`) approved. A deny rule matches each simple command
after normalization (quotes removed, the command's basename, wrappers peeled, bodies parsed);
where a denied command could hide in something only known at run time, the line is uncertain
and must be asked.
"""

from __future__ import annotations

import glob
import itertools
import os
import re
import shlex
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_repl.core.permissions.command_effects import (
    Effects,
    Risk,
    effects,
    judges_arguments,
    saves_exact_only,
)
from agent_repl.core.permissions.command_options import GIT_SUBCOMMANDS
from agent_repl.core.permissions.protected_paths import is_protected
from agent_repl.core.permissions.read_access import PathPattern, refusal
from agent_repl.core.permissions.shell_commands import Invocation, invocation
from agent_repl.core.permissions.shell_syntax import Redirect, ShellLine, SimpleCommand, Word, parse_line

# Commands that only test or do nothing; they need no rule when nothing in them expands code.
HARMLESS = {"true", "false", ":", "test", "["}
_FD_TARGET = re.compile(r"^(\d+|-)$")
_GLOB = re.compile(r"[*?\[]")
_PROC = re.compile(r"(^|/)proc(/|$)")
_SUBCOMMAND = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
# A pattern a reading command is given is expanded to check each file; past this many it is asked.
_MAX_GLOB = 1000
# Files a redirection may write or read without being inside the project.
_DEVICES = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero", "/dev/urandom",
            "/dev/random"}  # fmt: skip


@dataclass(frozen=True)
class CommandPattern:
    """The command part of `Bash(...)`: exact words, `prefix:*` / `prefix *`, or `*` wildcards."""

    text: str
    words: tuple[str, ...]
    prefix: bool
    wildcard: re.Pattern[str] | None = None

    @classmethod
    def parse(cls, spec: str) -> CommandPattern:
        body, prefix = spec, False
        if body.endswith(":*"):
            body, prefix = body[:-2], True
        elif body.endswith(" *") and body.count("*") == 1:
            body, prefix = body[:-2], True
        wildcard = None
        if _unquoted_star(body):
            parts = [re.escape(part) for part in body.split("*")]
            wildcard = re.compile(".*".join(parts) + ("( .*)?" if prefix else ""), re.DOTALL)
            body = body.split("*", 1)[0]
        try:
            words = tuple(shlex.split(body))
        except ValueError:
            words = tuple(body.split())
        if wildcard is not None and body and not body.endswith(" "):
            words = words[:-1]  # the word the first `*` sits in is not literal
        return cls(spec, words, prefix, wildcard)

    def coverage(self, argv: Sequence[str | None]) -> int:
        """How many leading words of `argv` the rule spells out (an exact rule: all of them)."""
        if self.wildcard is None and not self.prefix:
            return len(argv)
        return len(self.words)

    def allows(self, argv: Sequence[str | None]) -> bool:
        if any(word is None for word in argv[: max(len(self.words), 1)]):
            return False
        if self.wildcard is not None:
            return None not in argv and bool(self.wildcard.fullmatch(" ".join(a for a in argv if a is not None)))
        if self.prefix:
            return tuple(argv[: len(self.words)]) == self.words
        return tuple(argv) == self.words

    def denies(self, argv: Sequence[str | None]) -> bool | None:
        """True, False, or None when a word only known at run time decides it."""
        words = [os.path.basename(self.words[0]), *self.words[1:]] if self.words else []
        if argv and argv[0] is not None:
            argv = [os.path.basename(argv[0]), *argv[1:]]
        for i, word in enumerate(words):
            if i >= len(argv):
                return False
            if argv[i] is None:
                return None
            if argv[i] != word:
                return False
        if self.wildcard is not None:
            if None in argv:
                return None
            return bool(self.wildcard.fullmatch(" ".join([*words[:1], *(a or "" for a in argv[1:])])))
        return self.prefix or len(argv) == len(words)


def _unquoted_star(text: str) -> bool:
    """A `*` outside quotes is a wildcard; a quoted one (`find . -name '*.py'`) is a literal word."""
    quote = ""
    escaped = False
    for c in text:
        if escaped:
            escaped = False
        elif c == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "*":
            return True
    return False


@dataclass(frozen=True)
class Place:
    """Where a command runs: Bash's current directory and the folders the agent may work in."""

    cwd: Path
    roots: tuple[Path, ...]
    # The Read rules, which decide a reading command's files outside the roots as they decide Read's.
    read_allow: tuple[PathPattern, ...] = ()
    read_deny: tuple[PathPattern, ...] = ()
    read_anywhere: bool = False

    def inside(self, path: Path) -> bool:
        return any(path == root or root in path.parents for root in self.roots)

    def read_problem(self, path: Path, shown: str, name: str) -> str | None:
        """Why Read would not read `path` (a resolved file) without asking, or None."""
        if denied := next((rule for rule in self.read_deny if rule.matches(path)), None):
            return f"{name} reads {shown}, which Read({denied.text}) denies"
        if self.inside(path) or self.read_anywhere or any(rule.matches(path) for rule in self.read_allow):
            return None
        return f"{name} reads {shown}, outside the project"


# Where a simple command may end in a line the parser could not read: the fallback for deny rules.
_ROUGH_BREAKS = re.compile(r"[;&|`\n(){}<>]|\$\(")


def rough_commands(text: str) -> list[SimpleCommand]:
    """Whitespace-split pieces between shell operators, for a line that does not parse."""
    pieces = (part.split() for part in _ROUGH_BREAKS.split(text))
    return [SimpleCommand([Word(w, w.strip("'\"").replace("\\", "")) for w in words], " ".join(words))
            for words in pieces if words]  # fmt: skip


def all_invocations(line: ShellLine) -> Iterator[Invocation]:
    """Every command the line can start, through wrappers and through the shell text it runs."""
    commands = line.commands + (rough_commands(line.text) if not line.complete else [])
    for command in commands:
        for layer in invocation(command).layers():
            yield layer
            for _, body in layer.bodies:
                if body is not None:
                    yield from all_invocations(body)


def deny_match(line: ShellLine, patterns: Iterable[CommandPattern]) -> tuple[CommandPattern | None, list[str]]:
    """The deny pattern a command in the line matches, else None and why a match cannot be ruled out."""
    patterns = list(patterns)
    uncertain = list(line.uncertain)
    for inv in all_invocations(line):
        for pattern in patterns:
            verdict = pattern.denies(inv.argv)
            if verdict:
                return pattern, []
            if verdict is None:
                uncertain.append(f"{_shown(inv.argv)} is only known when it runs")
        if inv.name is None and inv.argv:
            uncertain.append("a command name is only known when it runs")
        if any(body is None for _, body in inv.bodies):
            uncertain.append(f"{inv.name} runs text that is only known when it runs")
        if inv.unseen:
            uncertain.append(inv.unseen)
        for _, body in inv.bodies:
            if body is not None:
                uncertain.extend(body.uncertain)
    return None, list(dict.fromkeys(uncertain))


def allow_problem(line: ShellLine, patterns: Sequence[CommandPattern], place: Place) -> str | None:
    """None when the allow patterns approve the whole line, else the first reason they do not."""
    if line.hazards:
        return line.hazards[0]
    if not line.commands:
        return "there is no command to approve"
    changes_dir = any(c.words and c.words[0].value in ("cd", "pushd", "popd") for c in line.commands)
    folders = _folders(line, place)
    if isinstance(folders, str):
        return folders
    for redirect in line.redirects:
        problem = _redirect_problem(redirect, place, changes_dir)
        if problem:
            return problem
    for command in line.commands:
        problem = _mentions_outside(command)
        if problem:
            return problem
        if _harmless(command):
            continue
        inv = invocation(command)
        problem = _approval(inv, patterns, place)
        if problem:
            return problem
        for layer in inv.layers():
            problem = _files_problem(layer, place, changes_dir, folders)
            if problem:
                return problem
    return None


def protected_write_problem(line: ShellLine, place: Place) -> str | None:
    """Why the line writes a protected path (a redirection or a command's known target), or None.

    Checked in every mode and under any rule, even a bare `Bash` or skipped permissions."""
    # Where a relative target may land: the current directory and each folder the line changes to.
    bases: list[Path | None] = [place.cwd]
    for command in line.commands:
        if command.words and command.words[0].value in ("cd", "pushd"):
            folder = command.words[1].value if len(command.words) > 1 else str(Path.home())
            bases.append(None if folder is None else place.cwd / os.path.expanduser(folder))
    targets: list[tuple[str | None, str, str]] = []
    for redirect in line.redirects:
        if redirect.operator.startswith("<<") or redirect.operator in ("<", "<&"):
            continue
        target = redirect.target.value if redirect.target else None
        if target is not None and redirect.operator == ">&" and _FD_TARGET.match(target):
            continue
        targets.append((target, redirect.target.text if redirect.target else "", redirect.operator))
    for command in line.commands:
        for layer in invocation(command).layers():
            written = [*layer.writes, *(path for _, path in effects_of(layer).writes)]
            targets.extend((path, path or "", f"{layer.name} writing") for path in written)
            for _, body in layer.bodies:  # `bash -c '...'`, `eval`: the text it runs writes too
                if body is not None and (problem := protected_write_problem(body, place)):
                    return problem
    for target, raw, what in targets:
        if target is None or target in _DEVICES:
            continue
        path = Path(os.path.expanduser(target) if raw.startswith("~") else target)
        candidates = [path] if path.is_absolute() else [base / path if base else None for base in bases]
        if any(c is None or is_protected(c) for c in candidates):
            return f"{what} {target} writes where other programs take commands or grants from"
    return None


def _folders(line: ShellLine, place: Place) -> list[Path] | str:
    """Every folder the line's commands may run in (the current one, then each `cd`, in turn),
    or why a relative path in it cannot be placed: a folder outside the project or only known later."""
    folders, current = [place.cwd], place.cwd
    for command in line.commands:
        argv = command.argv
        if not argv or argv[0] not in ("cd", "pushd", "popd"):
            continue
        args = [a for a in argv[1:] if a is None or not a.startswith("-") or a == "-"]
        if argv[0] != "popd" and not args:
            return f"{argv[0]} with no folder goes to the home folder, outside the project"
        if argv[0] == "popd" or args[0] is None or args[0] == "-":
            return f"{argv[0]} changes to a folder only known when it runs"
        target = os.path.expanduser(args[0])
        current = Path(os.path.realpath(current / target))
        if not place.inside(current):
            return f"{argv[0]} {args[0]} leaves the project"
        folders.append(current)
    return folders


def _files_problem(layer: Invocation, place: Place, changes_dir: bool, folders: list[Path]) -> str | None:
    """Files a command writes or reads through its own words, judged like redirections and like Read."""
    found = effects_of(layer)
    for path in [*layer.writes, *(path for _, path in found.writes)]:
        problem = _target_problem(path, path or "", f"{layer.name} writing", place, changes_dir, writes=True)
        if problem:
            return problem
    for _, path in found.reads:
        problem = _read_problem(path, layer.name or "the command", place, folders)
        if problem:
            return problem
    return None


def effects_of(inv: Invocation) -> Effects:
    """What `inv`'s words make it run, read and write, with what xargs adds at run time."""
    found = effects(inv.argv)
    if inv.more_args_at_run_time and judges_arguments(inv.name):
        found.runs.append(Risk(len(inv.argv), f"xargs gives {inv.name} arguments (options, files) only known when it runs"))
    return found


def _harmless(command: SimpleCommand) -> bool:
    return not command.assignments and bool(command.words) and command.words[0].value in HARMLESS


def _approved(inv: Invocation, patterns: Sequence[CommandPattern], place: Place) -> bool:
    return _approval(inv, patterns, place) is None


def _approval(inv: Invocation, patterns: Sequence[CommandPattern], place: Place) -> str | None:
    """None when a pattern approves `inv` and what it starts, else why none does (one line)."""
    words = [*inv.assignments, *inv.argv]
    shift = len(inv.assignments)
    risks = effects_of(inv).runs
    why: str | None = None
    for pattern in patterns:
        if not pattern.allows(words):
            continue
        coverage = pattern.coverage(words) - shift
        risk = next((r for r in risks if r.at >= coverage), None)
        if risk is not None:
            why = why or f"Bash({pattern.text}) does not approve it: {risk.reason}"
            continue
        problem = _rest_problem(inv, coverage, patterns, place)
        if problem is None:
            return None
        why = why or problem
    if inv.transparent and not inv.assignments and len(inv.inner) == 1 and not inv.bodies:
        inner = _approval(inv.inner[0][1], patterns, place)
        if inner is None:
            return None
        why = why or inner
    return why or f"no allow rule covers {_shown(words)!r}"


def _rest_problem(inv: Invocation, coverage: int, patterns: Sequence[CommandPattern], place: Place) -> str | None:
    """Why what `inv` starts is not approved: spelled out by the rule (`coverage` words) or by a rule of its own."""
    if inv.unseen and coverage <= inv.unseen_at:
        return inv.unseen
    for offset, inner in inv.inner:
        if coverage > offset:
            problem = _rest_problem(inner, coverage - offset, patterns, place)
        else:
            problem = _approval(inner, patterns, place)
        if problem:
            return problem
    for offset, body in inv.bodies:
        if body is None:
            return f"{inv.name} runs text that is only known when it runs"
        if coverage <= offset:
            problem = allow_problem(body, patterns, place)
            if problem is not None:
                return problem
    return None


def _redirect_problem(redirect: Redirect, place: Place, changes_dir: bool) -> str | None:
    if redirect.operator.startswith("<<"):
        return None
    target = redirect.target.value if redirect.target else None
    if target is not None and redirect.operator in (">&", "<&") and _FD_TARGET.match(target):
        return None
    raw = redirect.target.text if redirect.target else ""
    return _target_problem(target, raw, redirect.operator, place, changes_dir, writes=redirect.operator != "<")


def _target_problem(target: str | None, raw: str, what: str, place: Place, changes_dir: bool, *,
                    writes: bool) -> str | None:  # fmt: skip
    """Why a file a command reads or writes keeps a rule from approving it (outside the project,
    only known at run time, or where other programs take commands from)."""
    if target is None:
        return f"the target of {what} is only known when it runs"
    if _GLOB.search(target):
        return f"the target of {what} is a pattern"
    if target in _DEVICES:
        return None
    path = Path(os.path.expanduser(target) if raw.startswith("~") else target)
    if not path.is_absolute():
        if changes_dir:
            return "a redirection follows a change of directory"
        path = place.cwd / path
    resolved = Path(os.path.realpath(path))
    if not place.inside(resolved):
        return f"{what} {target} is outside the project"
    if writes and is_protected(path):
        return f"{what} {target} writes where other programs take commands or grants from"
    return None


def _read_problem(path: str | None, name: str, place: Place, folders: list[Path], shown: str = "") -> str | None:
    """Why a file a command reads keeps a rule from approving it: as Read, outside the project asks."""
    if path is None:
        return f"{name} reads a file only known when it runs"
    if path in _DEVICES or path == "-":
        return None
    expanded = os.path.expanduser(path) if path.startswith("~") else path
    if not os.path.isabs(expanded):
        # Relative to each folder the line may be in by then.
        return next(filter(None, (_read_problem(os.path.join(f, expanded), name, place, [f], shown or path)
                                  for f in folders)), None)  # fmt: skip
    candidates = [expanded]
    if _GLOB.search(path):
        candidates = list(itertools.islice(glob.iglob(expanded), _MAX_GLOB + 1)) or [expanded]
        if len(candidates) > _MAX_GLOB:
            return f"{name} reads {path}, which matches too many files to check"
    for candidate in candidates:
        refused = refusal(candidate)
        if refused:
            return refused
        named = shown or path
        problem = place.read_problem(Path(os.path.realpath(candidate)), named if candidate == expanded else
                                     f"{named} ({candidate})", name)  # fmt: skip
        if problem:
            return problem
    return None


def _mentions_outside(command: SimpleCommand) -> str | None:
    """Paths a prefix rule must not reach silently: /proc (process memory and environments) and
    patterns that start outside the project."""
    for word in [*command.words, *command.assignments]:
        for text in (word.text, word.value or ""):
            if _PROC.search(text):
                return f"{word.text} may name /proc, where process memory and environments are"
        value = word.value or ""
        if _GLOB.search(value) and value.startswith(("/", "~", "..")):
            return f"the pattern {word.text} may reach outside the project"
    return None


def _shown(argv: Sequence[str | None]) -> str:
    return " ".join(a if a is not None else "…" for a in argv)


def narrowest_rules(line: ShellLine, place: Place) -> list[str]:
    """The rules "always allow" saves: for each named command the narrowest that approves it again.

    Nothing for an empty line, and nothing when no rule could approve the line (a substitution,
    a dynamic command name): saving a rule that never matches would only mislead.
    """
    if line.hazards or not line.commands:
        return []
    rules: list[str] = []
    for command in line.commands:
        if _harmless(command):
            continue
        rule = _rule_for(invocation(command), place)
        if rule is None:
            return []
        if rule not in rules:
            rules.append(rule)
    patterns = [CommandPattern.parse(r) for r in rules]
    return rules if allow_problem(line, patterns, place) is None else []


def _rule_for(inv: Invocation, place: Place) -> str | None:
    words = [*inv.assignments, *inv.argv]
    if not words or any(w is None for w in words):
        return None
    if inv.transparent and not inv.assignments and len(inv.inner) == 1 and not inv.bodies:
        return _rule_for(inv.inner[0][1], place)
    static = [w for w in words if w is not None]
    head = static[:2] if len(static) > 1 and _SUBCOMMAND.match(static[1]) and not inv.assignments else static[:1]
    if inv.name == "git" and (len(head) < 2 or head[1] not in GIT_SUBCOMMANDS):
        head = []  # `git:*` would approve every subcommand; an alias runs what the configuration says
    candidates = []
    if head and not inv.assignments and not saves_exact_only(inv.name):
        candidates.append(f"{shlex.join(head)}:*")
    candidates.append(shlex.join(static))
    for spec in candidates:
        if _approved(inv, [CommandPattern.parse(spec)], place):
            return spec
    return None


def parse_command(command: str) -> ShellLine:
    """The parse of `command`, with line continuations honoured as Bash honours them.

    tree-sitter splits `r\\<newline>m` into two words where Bash joins them into `rm`, so a line
    with a continuation is parsed both ways: deny checks see the commands of both parses, and
    an allow rule approves only when the two agree.
    """
    line = parse_line(command)
    if "\\\n" not in command:
        return line
    joined = parse_line(command.replace("\\\n", ""))
    if [c.argv for c in joined.commands] == [c.argv for c in line.commands]:
        return line
    line.add_hazard("a line continuation joins words")
    line.commands.extend(joined.commands)
    line.uncertain.extend(u for u in joined.uncertain if u not in line.uncertain)
    for hazard in joined.hazards:
        line.add_hazard(hazard)
    return line
