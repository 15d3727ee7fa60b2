"""What a command's own words make it do beyond its plain job: run code the rule did not spell out
(`sed '1e id'`, `git -c core.pager=...`, `rg --pre`), write files (`git log --output=F`,
`sort -o F`, `tee F`, `cp a F`), or read files (`head F`, `grep x F`).

A prefix rule approves a command only when the words that run code sit inside what the rule
spells out; written and read files are judged like redirections (inside the project, not into a
protected path) under any rule. Commands that run code from any argument (interpreters, build
tools, package-manager runners) are never saved as a prefix rule: "always" saves the exact line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agent_repl.core.permissions.command_options import GIT_SUBCOMMANDS, Options, parse_options
from agent_repl.core.permissions.sed_script import sed_effects


@dataclass(frozen=True)
class Risk:
    """A word (position in argv) that makes the command run code: a prefix rule must spell it out."""

    at: int
    reason: str


@dataclass
class Effects:
    runs: list[Risk] = field(default_factory=list)
    # (position, path) of files read and written; a path None is only known at run time.
    reads: list[tuple[int, str | None]] = field(default_factory=list)
    writes: list[tuple[int, str | None]] = field(default_factory=list)


# Programs that run code from their arguments, their input or the project's files (a Makefile, a
# package.json script, a conftest.py): "always" saves only the exact command line.
_EXACT_ONLY = {
    "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "fish", "csh", "tcsh", "pwsh", "powershell",
    "node", "nodejs", "deno", "bun", "ruby", "irb", "perl", "php", "lua", "luajit", "tclsh", "wish", "expect",
    "rscript", "r", "julia", "java", "jshell", "groovy", "scala", "kotlin", "swift", "osascript", "guile",
    "racket", "sbcl", "ghci", "runghc", "runhaskell", "elixir", "iex", "erl", "escript", "ipython", "pypy",
    "pypy3", "awk", "gawk", "mawk", "nawk", "busybox", "make", "gmake", "cmake", "ninja", "just", "task",
    "npm", "npx", "pnpm", "pnpx", "yarn", "corepack", "uv", "uvx", "pipx", "pip", "pip3", "poetry", "pdm",
    "hatch", "tox", "nox", "pytest", "py.test", "cargo", "go", "gradle", "gradlew", "mvn", "ant", "sbt", "mix",
    "rake", "bundle", "gem", "composer", "dotnet", "docker", "podman", "kubectl", "ssh", "scp", "rsync",
    "gdb", "lldb", "vim", "vi", "nvim", "ex", "emacs", "ed", "sqlite3", "psql", "mysql", "gcc", "cc", "g++",
    "c++", "clang", "clang++", "ld", "tmux", "screen", "parallel", "watch", "env", "xargs", "find", "sudo",
    "doas", "su", "eval", "exec", "source", ".", "alias", "trap", "script", "strace", "ltrace", "nice",
    "timeout", "nohup", "time", "stdbuf", "setsid", "ionice", "chroot", "unshare", "flock", "runuser",
    "taskset", "chrt", "unbuffer", "coproc", "command", "builtin",
}  # fmt: skip
_PYTHON = re.compile(r"^python[0-9.]*$")
_INTERPRETERS = {"node", "nodejs", "ruby", "perl", "php", "lua", "luajit", "tclsh", "wish", "julia", "pypy", "pypy3",
                 "ipython", "irb", "guile", "racket", "sbcl", "escript", "elixir", "osascript", "deno", "bun"}  # fmt: skip
# Options that give an interpreter its program in the words, or make it print and stop.
_PROGRAM_OPTIONS = {"-c", "-m", "-e", "-E", "--eval", "-p", "--print", "-r", "-M", "-l"}
_INFO_OPTIONS = {"--version", "-V", "-v", "--help", "-h", "-VV"}
# git subcommands that run programs by design or configure what git runs.
_GIT_RUNS = {"config", "submodule", "filter-branch", "bisect", "difftool", "mergetool", "send-email", "daemon",
             "instaweb", "credential", "hook", "web--browse", "archimport", "cvsimport", "cvsserver", "p4", "svn",
             "for-each-repo", "maintenance", "gui", "citool", "gitk", "http-backend", "upload-pack",
             "receive-pack", "shell", "remote-ext", "sh-setup", "merge-one-file", "quiltimport"}  # fmt: skip
_READERS = {
    "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "ack", "wc", "ls", "stat", "file",
    "diff", "cmp", "comm", "sort", "uniq", "cut", "paste", "join", "nl", "od", "xxd", "hexdump", "strings",
    "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum", "base64",
    "base32", "tac", "rev", "fold", "fmt", "column", "jq", "yq", "tree", "du", "readlink", "realpath", "look",
    "iconv", "expand", "unexpand", "pr", "zcat", "bzcat", "xzcat", "zstdcat", "lsattr", "getfacl", "cd", "pushd",
    "find", "sed", "awk", "gawk", "mawk", "nawk", "tr", "vdir", "dir", "namei", "sha1", "md5", "bat", "batcat",
}  # fmt: skip
# Commands whose operands are files they create, change or remove.
_WRITERS = {"touch", "mkdir", "rm", "rmdir", "truncate", "shred", "unlink", "mkfifo", "mknod", "chmod", "chown",
            "chgrp", "tee"}  # fmt: skip
# Options whose value is a file the command writes, in commands that are otherwise readers.
_GENERIC_WRITES = {"--log-file", "--output", "--output-file", "--output-document"}


def saves_exact_only(name: str | None) -> bool:
    """Whether "always" must save the exact line for this program (it runs code given the right words)."""
    if name is None:
        return True
    return name.lower() in _EXACT_ONLY or bool(_PYTHON.match(name))


def judges_arguments(name: str | None) -> bool:
    """Whether this command's arguments can make it run code, write or read files the checks judge."""
    return name is None or name in _HANDLERS or name in _READERS or name in _WRITERS or saves_exact_only(name)


def effects(argv: Sequence[str | None]) -> Effects:
    """What the words of one simple command make it run, read and write (wrappers are peeled elsewhere)."""
    name = _name(argv)
    if name is None:
        return Effects()
    handler = _HANDLERS.get(name)
    if handler is not None:
        return handler(argv)
    if name in _INTERPRETERS or _PYTHON.match(name):
        return _interpreter(argv)
    if name in _READERS:
        return _reader(argv)
    if name in _WRITERS:
        return _writer(argv)
    return _generic(argv)


def _name(argv: Sequence[str | None]) -> str | None:
    if not argv or argv[0] is None:
        return None
    return argv[0].rsplit("/", 1)[-1]


def _unknown(argv: Sequence[str | None], found: Effects, start: int = 1) -> None:
    """An argument only known at run time may be any option: one that runs code among them."""
    for i, word in enumerate(argv[start:], start=start):
        if word is None:
            found.runs.append(Risk(i, f"an argument of {_name(argv)} is only known when it runs"))
            return


def _reader(argv: Sequence[str | None], opts: Options | None = None) -> Effects:
    opts = opts or parse_options(argv, takes_arg=set(), reads=set())
    found = Effects()
    found.reads.extend(opts.operands)
    found.reads.extend(opts.reads)
    found.writes.extend(opts.writes)
    listed = {at for at, _ in [*opts.reads, *opts.writes]}
    for at, option, value in opts.options:
        if option in _GENERIC_WRITES and value is not None:
            found.writes.append((at, value))
        elif at not in listed and value is not None and value.startswith(("/", "~", "..")):
            found.reads.append((at, value))  # `--file=/path`: an option's value naming a file
    for at, word in enumerate(argv[1:], start=1):
        # `-f/path` clustered: the letters are options, the rest may be a file an option reads.
        if word and word.startswith("-") and not word.startswith("--") and at not in listed:
            cut = min((word.find(c) for c in "/~" if c in word), default=-1)
            if cut > 1:
                found.reads.append((at, word[cut:]))
    return found


def _writer(argv: Sequence[str | None]) -> Effects:
    opts = parse_options(argv, takes_arg={"-m", "--mode", "-s", "--size", "-r", "--reference", "-t"})
    found = Effects()
    found.writes.extend(opts.operands)
    return found


def _generic(argv: Sequence[str | None]) -> Effects:
    found = Effects()
    for i, word in enumerate(argv[1:], start=1):
        if word is None:
            continue
        option, eq, value = word.partition("=")
        if option in _GENERIC_WRITES:
            found.writes.append((i, value if eq else (argv[i + 1] if i + 1 < len(argv) else None)))
    return found


def _interpreter(argv: Sequence[str | None]) -> Effects:
    """An interpreter with no program in its words reads one from its input: no rule can vouch for it."""
    found = Effects()
    words = argv[1:]
    given = any(w is None or w == "-" or not w.startswith("-") for w in words) and "-" not in words
    flags = {w.split("=", 1)[0] for w in words if w and w.startswith("-")}
    if not given and not flags & (_PROGRAM_OPTIONS | _INFO_OPTIONS):
        found.runs.append(Risk(len(argv), f"{_name(argv)} runs whatever program arrives on its input"))
    return found


def _sed(argv: Sequence[str | None]) -> Effects:
    opts = parse_options(
        argv,
        takes_arg={"-e", "--expression", "-f", "--file", "-l", "--line-length"},
        optional_arg={"-i", "--in-place"},
        known={"-n", "--quiet", "--silent", "-r", "-E", "--regexp-extended", "-s", "--separate", "-u", "--unbuffered",
               "-z", "--null-data", "--zero-terminated", "--debug", "--posix", "--sandbox", "--follow-symlinks",
               "-b", "--binary", "--help", "--version", "-e", "--expression", "-f", "--file", "-l", "--line-length",
               "-i", "--in-place"},  # fmt: skip
    )
    found = Effects(runs=[Risk(at, f"sed does not know the option {word}") for at, word in opts.unknown])
    scripts = [(at, value) for at, option, value in opts.options if option in ("-e", "--expression")]
    for at, option, _ in opts.options:
        if option in ("-f", "--file"):
            found.runs.append(Risk(at, "sed -f reads its script (which may run commands) from a file"))
    operands = list(opts.operands)
    if not scripts and not any(o in ("-f", "--file") for _, o, _ in opts.options) and operands:
        scripts.append(operands.pop(0))
    for at, script in scripts:
        if script is None:
            found.runs.append(Risk(at, "the sed script is only known when it runs"))
            continue
        for effect in sed_effects(script):
            if effect.kind == "writes":
                found.writes.append((at, effect.path))
            elif effect.kind == "reads":
                found.reads.append((at, effect.path))
            else:
                found.runs.append(Risk(at, effect.what))
    in_place = any(o in ("-i", "--in-place") for _, o, _ in opts.options)
    (found.writes if in_place else found.reads).extend(operands)
    return found


def _awk(argv: Sequence[str | None]) -> Effects:
    opts = parse_options(argv, takes_arg={"-F", "-v", "-f", "--file", "--field-separator", "--assign"})
    found = Effects(runs=[Risk(at, f"{_name(argv)} does not know the option {w}") for at, w in opts.unknown])
    from_file = [at for at, option, _ in opts.options if option in ("-f", "--file")]
    for at in from_file:
        found.runs.append(Risk(at, "awk -f reads its program (which may run commands) from a file"))
    for at, option, _ in opts.options:
        if option.startswith("--") and option not in ("--file", "--field-separator", "--assign", "--"):
            found.runs.append(Risk(at, f"the awk option {option} is not one the checker knows to be harmless"))
    operands = list(opts.operands)
    if not from_file and operands:
        at, program = operands.pop(0)
        if program is None:
            found.runs.append(Risk(at, "the awk program is only known when it runs"))
        elif any(token in program for token in ("system", "|", "getline", "@", ">", "ENVIRON", "PROCINFO")):
            found.runs.append(Risk(at, "the awk program can run commands or write files (system, |, getline, >)"))
    found.reads.extend((at, w) for at, w in operands if w is None or not re.match(r"^[A-Za-z_]\w*=", w))
    return found


def _git(argv: Sequence[str | None]) -> Effects:
    found = Effects()
    i = 1
    while i < len(argv):
        word = argv[i]
        if word is None:
            found.runs.append(Risk(i, "a git option or subcommand is only known when it runs"))
            return found
        if not word.startswith("-"):
            break
        option = word.split("=", 1)[0]
        if option in ("-c", "--config-env") or word.startswith("-c"):
            found.runs.append(Risk(i, "git -c sets configuration, which can name programs git runs"))
        elif option in ("--exec-path", "-p", "--paginate", "--git-dir", "--work-tree", "-C", "--namespace",
                        "--super-prefix", "--list-cmds"):  # fmt: skip
            found.runs.append(Risk(i, f"git {option} makes git run or read what another place configures"))
        if option in ("-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env") and "=" not in word:
            i += 1
        i += 1
    if i >= len(argv):
        return found
    sub = argv[i]
    if sub in _GIT_RUNS:
        # Past the subcommand: `git config:*` must not approve `git config core.fsmonitor ...`.
        found.runs.append(Risk(i + 1, f"git {sub} runs or configures programs"))
        if sub == "config":
            found.writes.extend(_git_config_writes(argv, i))
    elif sub not in GIT_SUBCOMMANDS:
        found.runs.append(Risk(i, f"git {sub} is not a built-in command: an alias or a git-{sub} program runs"))
    if sub in ("clone", "init"):
        # The folder it creates: clone's second operand, init's first.
        operands = parse_options([None, *argv[i + 1 :]], takes_arg={"-c", "--config", "-o", "--origin", "-b",
                                                                    "--branch", "--depth", "--reference",
                                                                    "--template", "--separate-git-dir", "-u",
                                                                    "--upload-pack", "--filter"}).operands  # fmt: skip
        index = 1 if sub == "clone" else 0
        if len(operands) > index:
            found.writes.append((i + operands[index][0], operands[index][1]))
    applies = sub in ("apply", "am")
    for j, word in enumerate(argv[i + 1 :], start=i + 1):
        if word is None:
            found.runs.append(Risk(j, f"an argument of git {sub} is only known when it runs"))
            continue
        option, eq, value = word.partition("=")
        nxt = argv[j + 1] if j + 1 < len(argv) else None
        if option in ("--ext-diff", "--textconv", "--upload-pack", "--receive-pack", "--exec", "--template",
                      "--open-files-in-pager", "--extcmd", "--tool", "--sendmail-cmd", "--to-cmd", "--cc-cmd",
                      "--run", "--config", "--separate-git-dir", "--filter"):  # fmt: skip
            found.runs.append(Risk(j, f"git's {option} runs a program or sets what git runs"))
        elif (sub == "grep" and word.startswith("-O")) or (sub == "rebase" and word in ("-x",)) or (
            sub in ("clone", "fetch", "pull", "ls-remote", "archive") and word == "-u"
        ):
            found.runs.append(Risk(j, f"git {sub} {word} runs a program"))
        elif option in ("--output", "--output-directory"):
            found.writes.append((j, value if eq else nxt))
        elif sub in ("format-patch", "archive") and option == "-o":
            found.writes.append((j, nxt))
        elif sub in ("apply", "am") and word in ("--check", "--stat", "--numstat", "--summary", "--cached"):
            applies = False
        elif sub == "clone" and word == "-c":
            found.runs.append(Risk(j, "git clone -c sets configuration, which can name programs git runs"))
        elif sub == "bundle" and word == "create":
            found.writes.append((j, nxt))
        elif option in ("--contents", "--no-index"):
            found.reads.extend((k, w) for k, w in enumerate(argv[j + 1 :], start=j + 1) if w and not w.startswith("-"))
    if applies:
        found.writes.append((i, None))  # the files the patch names: `.envrc` or `.mcp.json` among them
    return found


def _git_config_writes(argv: Sequence[str | None], sub_at: int) -> list[tuple[int, str | None]]:
    """The configuration file `git config` changes, unless it only reads (`--get`, `--list`, one name)."""
    opts = parse_options([None, *argv[sub_at + 1 :]], takes_arg={"-f", "--file", "--blob", "--type", "--default"})
    names = {option for _, option, _ in opts.options}
    if names & {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list", "--get-color", "--show-origin",
                "--get-colorbool", "--name-only"} or (len(opts.operands) <= 1 and not names & {
                "--unset", "--unset-all", "--remove-section", "--rename-section", "-e", "--edit", "--add",
                "--replace-all"}):  # fmt: skip
        return []
    target: str | None = ".git/config"
    for _, option, value in opts.options:
        if option in ("-f", "--file"):
            target = value
        elif option == "--global":
            target = "~/.gitconfig"
        elif option == "--system":
            target = "/etc/gitconfig"
    return [(sub_at, target)]


def _sort(argv: Sequence[str | None]) -> Effects:
    opts = parse_options(argv, takes_arg={"-o", "--output", "-k", "--key", "-t", "--field-separator", "-T",
                                          "--temporary-directory", "-S", "--buffer-size", "--parallel",
                                          "--batch-size", "--compress-program", "--files0-from", "--sort",
                                          "--random-source"},  # fmt: skip
                         reads={"--files0-from", "--random-source"}, writes={"-o", "--output"})
    found = _reader(argv, opts)
    for at, option, _ in opts.options:
        if option == "--compress-program":
            found.runs.append(Risk(at, "sort --compress-program runs a program"))
    return found


def _rg(argv: Sequence[str | None]) -> Effects:
    opts = parse_options(argv, takes_arg={"-e", "--regexp", "-f", "--file", "-g", "--glob", "-t", "--type", "-T",
                                          "--type-not", "-m", "--max-count", "-A", "-B", "-C", "--pre",
                                          "--pre-glob", "--ignore-file", "-j", "--threads", "-M", "--max-columns",
                                          "--type-add", "-r", "--replace", "-E", "--encoding"},  # fmt: skip
                         reads={"-f", "--file", "--ignore-file"})
    found = _reader(argv, opts)
    for at, option, _ in opts.options:
        if option == "--pre":
            found.runs.append(Risk(at, "rg --pre runs a program on every file it searches"))
    return found


def _tar(argv: Sequence[str | None]) -> Effects:
    found = Effects()
    words = list(argv)
    if len(words) > 1 and words[1] is not None and words[1][:1] not in ("-", ""):
        words[1] = "-" + words[1]  # the old style `tar xzf a.tgz`
    opts = parse_options(words, takes_arg={"-f", "--file", "-C", "--directory", "-I", "--use-compress-program",
                                           "-T", "--files-from", "-X", "--exclude-from", "-F", "--info-script",
                                           "--new-volume-script", "--to-command", "--checkpoint-action",
                                           "--rsh-command", "--rmt-command", "-b", "--blocking-factor", "-N",
                                           "--newer", "--owner", "--group", "--mode", "-K", "-L", "-V", "--label",
                                           "--transform", "--xform", "--exclude", "--strip-components"},  # fmt: skip
                         reads={"-T", "--files-from", "-X", "--exclude-from"})
    creates = any(o in ("-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate", "--concatenate")
                  for _, o, _ in opts.options)  # fmt: skip
    extracts = any(o in ("-x", "--extract", "--get") for _, o, _ in opts.options)
    for at, option, value in opts.options:
        if option in ("-I", "--use-compress-program", "-F", "--info-script", "--new-volume-script", "--to-command",
                      "--checkpoint-action", "--rsh-command", "--rmt-command"):  # fmt: skip
            found.runs.append(Risk(at, f"tar {option} runs a program"))
        elif option in ("-P", "--absolute-names"):
            found.runs.append(Risk(at, "tar -P writes or reads the absolute paths an archive names"))
        elif option in ("-f", "--file"):
            if value is not None and ":" in value.split("/", 1)[0] and "--force-local" not in argv:
                found.runs.append(Risk(at, "a tar archive named host:file is opened through a remote shell"))
            (found.writes if creates else found.reads).append((at, value))
        elif option in ("-C", "--directory"):
            (found.writes if extracts else found.reads).append((at, value))
    found.reads.extend(opts.reads)
    if extracts:
        # The files written are the archive's (a `.git/hooks/` or `.envrc` among them, a link, `../x`),
        # known only when it runs: a member named on the line may be a folder holding any of them.
        found.writes.append((0, None))
    if creates:
        found.reads.extend(opts.operands)
    return found


def _second_operand_out(argv: Sequence[str | None]) -> Effects:
    """uniq and xxd: `cmd IN OUT` writes OUT."""
    takes = {"-f", "--skip-fields", "-s", "--skip-chars", "-w", "--check-chars"} if _name(argv) == "uniq" else {
        "-c", "-cols", "-g", "-groupsize", "-l", "-len", "-o", "-offset", "-n", "-name", "-s", "-seek"}  # fmt: skip
    opts = parse_options(argv, takes_arg=takes)
    found = _reader(argv, opts)
    if len(opts.operands) > 1:
        found.reads.remove(opts.operands[1])
        found.writes.append(opts.operands[1])
    return found


def _in_place(argv: Sequence[str | None]) -> Effects:
    """yq -i writes the files it reads; iconv -o and tree -o write their option's file."""
    opts = parse_options(argv, takes_arg={"-o", "--output", "-f", "--from-code", "-t", "--to-code", "-L", "-P", "-I",
                                          "--front-matter", "--output-format", "--input-format", "-p"},  # fmt: skip
                         writes={"-o", "--output"} if _name(argv) in ("iconv", "tree") else set())
    found = _reader(argv, opts)
    if _name(argv) == "yq" and {o for _, o, _ in opts.options} & {"-i", "--inplace"}:
        found.writes.extend(found.reads)
    return found


def _unzip(argv: Sequence[str | None]) -> Effects:
    """unzip writes the files the archive names unless it only lists, tests or prints them."""
    opts = parse_options(argv, takes_arg={"-d", "-x", "-P"})
    found = Effects(reads=opts.operands[:1])
    if not {o for _, o, _ in opts.options} & {"-l", "-t", "-v", "-p", "-c", "-Z", "-z"}:
        found.writes.append((0, None))
    return found


def _patch(argv: Sequence[str | None]) -> Effects:
    """patch writes the file it is given, else the files the patch names (known when it runs)."""
    opts = parse_options(argv, takes_arg={"-o", "--output", "-i", "--input", "-p", "--strip", "-d", "--directory",
                                          "-r", "--reject-file", "-B", "--prefix", "-z", "--suffix", "-D",
                                          "--ifdef", "-F", "--fuzz"},  # fmt: skip
                         reads={"-i", "--input"}, writes={"-o", "--output", "-r", "--reject-file"})
    found = Effects(reads=list(opts.reads), writes=list(opts.writes))
    names = {o for _, o, _ in opts.options}
    if "--dry-run" not in names and not names & {"-o", "--output"}:
        found.writes.extend(opts.operands[:1] or [(0, None)])
    return found


def _copy(argv: Sequence[str | None]) -> Effects:
    """cp, mv, install, ln: the target (last operand or -t DIR) is written; cp and install read the sources."""
    name = _name(argv)
    opts = parse_options(argv, takes_arg={"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o",
                                          "--owner", "-g", "--group", "--backup"},  # fmt: skip
                         optional_arg={"--backup"}, writes={"-t", "--target-directory"})
    found = Effects(writes=list(opts.writes))
    operands = list(opts.operands)
    if not opts.writes and operands and not (name == "ln" and len(operands) == 1):
        found.writes.append(operands.pop())
    if name == "mv":
        found.writes.extend(operands)
    elif name in ("cp", "install"):
        found.reads.extend(operands)
    return found


def _less(argv: Sequence[str | None]) -> Effects:
    opts = parse_options(argv, takes_arg={"-o", "--log-file", "-O", "--LOG-FILE", "-p", "--pattern", "-t", "--tag",
                                          "-T", "--tag-file", "-x", "--tabs", "-y", "-z", "-b", "-h", "-j", "-k",
                                          "--lesskey-file"},  # fmt: skip
                         writes={"-o", "--log-file", "-O", "--LOG-FILE"}, reads={"-k", "--lesskey-file", "-T",
                                                                               "--tag-file"})  # fmt: skip
    found = _reader(argv, opts)
    for at, word in list(found.reads):
        if word is not None and word.startswith("+"):
            found.reads.remove((at, word))
            found.runs.append(Risk(at, f"{_name(argv)} runs the command {word} at start, a shell escape among them"))
    return found


def _zip(argv: Sequence[str | None]) -> Effects:
    opts = parse_options(argv, takes_arg={"-TT", "--unzip-command", "-b", "-n", "-t", "-tt", "-x", "-i", "-P",
                                          "--password", "-O", "--output-file"},  # fmt: skip
                         writes={"-O", "--output-file"})
    found = Effects(writes=list(opts.writes))
    for at, option, _ in opts.options:
        if option in ("-T", "--unzip-command"):
            found.runs.append(Risk(at, "zip can run a program to test the archive (-TT, --unzip-command)"))
    operands = list(opts.operands)
    if operands:
        found.writes.append(operands.pop(0))
    found.reads.extend(operands)
    return found


def _dd(argv: Sequence[str | None]) -> Effects:
    found = Effects()
    for i, word in enumerate(argv[1:], start=1):
        if word is None:
            found.runs.append(Risk(i, "an operand of dd is only known when it runs"))
        elif word.startswith("of="):
            found.writes.append((i, word[3:]))
        elif word.startswith("if="):
            found.reads.append((i, word[3:]))
    return found


def _with_output(short: str, *, runs: dict[str, str] | None = None, reads: set[str] | None = None):
    """A command whose `short`/--output option names a file it writes (curl -o, gcc -o, patch -o ...)."""

    def handler(argv: Sequence[str | None]) -> Effects:
        found = Effects()
        for i, word in enumerate(argv[1:], start=1):
            if word is None:
                continue
            option, eq, value = word.partition("=")
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            if word == short or option in _GENERIC_WRITES:
                found.writes.append((i, value if eq and option != short else nxt))
            elif short and word.startswith(short) and len(word) > len(short) and not word.startswith("--"):
                found.writes.append((i, word[len(short) :]))
            elif runs and (option in runs or any(word.startswith(r) for r in runs if len(r) == 2)):
                found.runs.append(Risk(i, runs.get(option, f"{_name(argv)} {word} runs a program")))
            elif reads and option in reads:
                path = value if eq else nxt
                if option.startswith("--data") or option == "-d":  # curl's data is a file only after `@`
                    if path is None or not path.startswith("@"):
                        continue
                    path = path[1:]
                found.reads.append((i, path))
        return found

    return handler


_HANDLERS = {
    "sed": _sed, "gsed": _sed, "awk": _awk, "gawk": _awk, "mawk": _awk, "nawk": _awk, "git": _git, "sort": _sort,
    "rg": _rg, "tar": _tar, "gtar": _tar, "cp": _copy, "mv": _copy, "install": _copy, "ln": _copy, "dd": _dd,
    "curl": _with_output("-o", runs={"-K": "curl -K reads options (an output file among them) from a file",
                                     "--config": "curl --config reads options from a file"},
                         reads={"-T", "--upload-file", "--data-binary", "--data", "-d", "--data-urlencode",
                                "--data-raw"}),
    "wget": _with_output("-O", runs={"-e": "wget -e runs wgetrc commands", "--execute": "wget --execute runs wgetrc commands",
                                     "--use-askpass": "wget --use-askpass runs a program"},
                         reads={"-i", "--input-file", "--post-file", "--body-file"}),
    "unzip": _unzip, "patch": _patch, "uniq": _second_operand_out, "xxd": _second_operand_out, "yq": _in_place,
    "iconv": _in_place, "tree": _in_place,
    "gcc": _with_output("-o"), "cc": _with_output("-o"), "g++": _with_output("-o"), "c++": _with_output("-o"),
    "clang": _with_output("-o"), "clang++": _with_output("-o"),
    "tcpdump": _with_output("-w", runs={"-z": "tcpdump -z runs a program on each file it saves"}),
    "strace": _with_output("-o"), "ltrace": _with_output("-o"),
    "man": _with_output("", runs={"-P": "man -P runs a pager program", "--pager": "man --pager runs a program",
                                  "-H": "man -H runs a browser", "--html": "man --html runs a browser"}),
    "zip": _zip, "less": _less, "more": _less,
}  # fmt: skip
