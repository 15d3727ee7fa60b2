"""Reading a command's options the way getopt does: `-abc` clusters, `-ofile` and `-o file`,
`--name=value` and `--name value`, `--` ending the options; and git's built-in commands (any other
word after `git` is an alias or a `git-NAME` program, both of which run code).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


@dataclass
class Options:
    # (position, option as written without its value, value or None).
    options: list[tuple[int, str, str | None]] = field(default_factory=list)
    operands: list[tuple[int, str | None]] = field(default_factory=list)
    reads: list[tuple[int, str | None]] = field(default_factory=list)
    writes: list[tuple[int, str | None]] = field(default_factory=list)
    # Options outside `known`, when the caller gave the full list.
    unknown: list[tuple[int, str]] = field(default_factory=list)


def parse_options(
    argv: Sequence[str | None],
    *,
    takes_arg: Iterable[str] = (),
    optional_arg: Iterable[str] = (),
    reads: Iterable[str] = (),
    writes: Iterable[str] = (),
    known: Iterable[str] | None = None,
) -> Options:
    takes, optional = set(takes_arg), set(optional_arg)
    read_opts, write_opts = set(reads), set(writes)
    known_opts = set(known) if known is not None else None
    found = Options()

    def record(at: int, option: str, value: str | None) -> None:
        found.options.append((at, option, value))
        if option in read_opts:
            found.reads.append((at, value))
        if option in write_opts:
            found.writes.append((at, value))
        if known_opts is not None and option not in known_opts:
            found.unknown.append((at, option))

    i, ended = 1, False
    while i < len(argv):
        word = argv[i]
        if ended or word is None or word == "-" or not word.startswith("-"):
            found.operands.append((i, word))
        elif word == "--":
            ended = True
        elif word.startswith("--"):
            name, eq, value = word.partition("=")
            if eq:
                record(i, name, value)
            elif name in takes:
                record(i, name, argv[i + 1] if i + 1 < len(argv) else None)
                i += 1
            else:
                record(i, name, None)
        else:
            for j, letter in enumerate(word[1:], start=2):
                option, rest = f"-{letter}", word[j:]
                if option in takes:
                    if rest:
                        record(i, option, rest)
                    else:
                        record(i, option, argv[i + 1] if i + 1 < len(argv) else None)
                        i += 1
                    break
                if option in optional:
                    record(i, option, rest or None)
                    break
                record(i, option, None)
        i += 1
    return found


GIT_SUBCOMMANDS = frozenset("""
add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr check-ignore
check-mailmap check-ref-format checkout checkout-index cherry cherry-pick clean clone column commit
commit-graph commit-tree config count-objects describe diagnose diff diff-files diff-index diff-tree
difftool fetch fetch-pack filter-branch fmt-merge-msg for-each-ref format-patch fsck gc
get-tar-commit-id grep hash-object help index-pack init interpret-trailers log ls-files ls-remote
ls-tree mailinfo mailsplit merge merge-base merge-file merge-tree mergetool mktag mktree mv name-rev
notes pack-objects pack-refs patch-id prune pull push range-diff read-tree rebase reflog remote repack
replace rerere reset restore rev-list rev-parse revert rm shortlog show show-branch show-index
show-ref sparse-checkout stash status stripspace submodule switch symbolic-ref tag unpack-objects
update-index update-ref var verify-commit verify-pack verify-tag version whatchanged worktree
write-tree send-email daemon instaweb credential hook maintenance gui citool gitk
""".split())
