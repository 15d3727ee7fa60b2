"""The risky parts of a Bash command line, found on its tree-sitter parse, for a dialog to mark.

Each mark is a span of the command's text with a one-line note: `eval` and `source`, an
interpreter given code (`bash -c`, `python3 -c`, a here-document), a pipe into a shell or an
interpreter, a download piped into another command, a decoder (`base64 -d`), a command
substitution, a write (redirections, `tee`, `dd of=`), and a command name that is computed or
spelt with quotes or escapes. The marks only help the reader; what runs is decided by the
permission rules on their own parse.
"""

from __future__ import annotations

import bisect
import codecs
import re
from dataclasses import dataclass

from tree_sitter import Node

from agent_repl.core.permissions.command_effects import effects
from agent_repl.core.permissions.shell_syntax import parse_line, syntax_tree

SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox"}
# The options that hand an interpreter its program as text, per interpreter.
_CODE_OPTIONS = {
    **dict.fromkeys(SHELLS, {"-c"}),
    "python": {"-c"},
    "perl": {"-e", "-E"},
    "ruby": {"-e"},
    "node": {"-e", "--eval", "-p", "--print"},
    "nodejs": {"-e", "--eval", "-p", "--print"},
    "bun": {"-e", "--eval", "-p", "--print"},
    "deno": {"eval"},
    "php": {"-r"},
    "lua": {"-e"},
    "luajit": {"-e"},
    "osascript": {"-e"},
    "pwsh": {"-c", "-command", "-encodedcommand", "-enc", "-e"},
    "powershell": {"-c", "-command", "-encodedcommand", "-enc", "-e"},
    "tclsh": set(),
    "rscript": {"-e"},
}
_PYTHON = re.compile(r"^python[0-9.]*$")
_WRAPPERS = {"sudo", "doas", "env", "command", "builtin", "exec", "nohup", "nice", "time", "timeout", "stdbuf",
             "setsid", "xargs", "ionice", "chroot", "unbuffer", "watch"}  # fmt: skip
# Wrapper options that take the next word as their value.
_WRAPPER_VALUES = {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-s", "-k", "-n", "-I", "-L", "-P", "-d",
                   "-c", "-S"}  # fmt: skip
_DOWNLOADERS = {"curl", "wget"}
_WRITE_OPERATORS = {">", ">>", ">|", "&>", "&>>", "<>", ">&"}
_HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"}
_REMOVERS = {"rm", "rmdir", "unlink", "shred"}
_TEXT_NODES = {"word", "regex", "extglob_pattern", "heredoc_content", "heredoc_body"}
# Commands that run a text argument as a shell command, and the options that hand it over (None: any argument).
_TEXT_RUNNERS: dict[str, set[str] | None] = {
    "su": {"-c", "--command"}, "flock": {"-c", "--command"}, "script": {"-c", "--command"},
    "env": {"-S", "--split-string"}, "watch": None, "trap": None, "alias": None,
}  # fmt: skip
# Variables that make the command they are set for run other code or other programs.
_CODE_VARIABLES = re.compile(r"^(PATH|LD_\w+|DYLD_\w+|PYTHON(PATH|STARTUP|HOME)|NODE_OPTIONS|NODE_PATH|BASH_ENV|ENV|"
                             r"PROMPT_COMMAND|PS[0-4]|IFS|PAGER|EDITOR|VISUAL|LESSOPEN|LESSCLOSE|PERL5OPT|PERL5LIB|"
                             r"RUBYOPT|RUBYLIB|GIT_\w+|SHELLOPTS|BASHOPTS|HOME|TMPDIR)$")  # fmt: skip
_DQ_ESCAPE = re.compile(r"\\([\\\"$`\n])")
_BACKSLASH = re.compile(r"\\(.)", re.DOTALL)


@dataclass(frozen=True)
class CommandMark:
    start: int  # character offsets into the command line
    end: int
    kind: str
    note: str


def interpreter(name: str | None) -> str | None:
    """The family an interpreter's name belongs to (`python3.12` is `python`), None for other commands."""
    if name is None:
        return None
    base = name.rsplit("/", 1)[-1]
    if _PYTHON.match(base):
        return "python"
    return base if base.lower() in _CODE_OPTIONS or base in _CODE_OPTIONS else None


def _code_option(family: str, args: list[str | None]) -> str | None:
    options = _CODE_OPTIONS.get(family) or _CODE_OPTIONS.get(family.lower(), set())
    for arg in args:
        if arg is None:
            continue
        if arg in options or arg.lower() in options:
            return arg
        if family in SHELLS and re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", arg):
            return arg  # `bash -lc`, `sh -ec`
    return None


def _decoding(name: str, args: list[str | None]) -> str | None:
    """The option that makes `name` decode hidden text, if it is given."""
    for arg in (a for a in args if a is not None):
        if name in ("base64", "base32", "basenc") and (arg in ("--decode", "-D") or re.fullmatch(r"-[a-zA-Z]*d[a-zA-Z]*", arg)):
            return arg
        if name == "xxd" and (arg == "-revert" or re.fullmatch(r"-[a-zA-Z]*r[a-zA-Z]*", arg)):
            return arg
        if name == "openssl" and arg in ("-d", "-base64", "-a") and "-d" in args:
            return "-d"
    return "" if name == "uudecode" else None


class _Finder:
    def __init__(self, text: str) -> None:
        root, self.source = syntax_tree(text)
        self.text = text
        self.complete = not root.has_error
        self.marks: list[CommandMark] = []
        # Byte offset of each character, to turn tree-sitter's byte offsets into character offsets.
        self._byte_starts = [0]
        for char in text:
            self._byte_starts.append(self._byte_starts[-1] + len(char.encode("utf-8", "surrogatepass")))
        self.walk(root)

    def chars(self, byte: int) -> int:
        return min(bisect.bisect_right(self._byte_starts, byte) - 1, len(self.text))

    def raw(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    def mark(self, start: Node, end: Node, kind: str, note: str) -> None:
        self.marks.append(CommandMark(self.chars(start.start_byte), self.chars(end.end_byte), kind, note))

    def literal(self, node: Node) -> str | None:
        """A word's value after quote removal, None when it expands at run time."""
        kind = node.type
        if kind in ("word", "number"):
            return _BACKSLASH.sub(lambda m: "" if m[1] == "\n" else m[1], self.raw(node))
        if kind == "raw_string":
            return self.raw(node)[1:-1]
        if kind == "ansi_c_string":
            body = self.raw(node)[2:-1]
            try:
                return codecs.decode(body.replace("\\'", "'").encode("latin-1", "backslashreplace"), "unicode_escape")
            except (UnicodeDecodeError, ValueError):
                return None
        if kind in ("string", "concatenation"):
            parts = []
            for child in node.children:
                if child.type == '"':
                    continue
                part = _DQ_ESCAPE.sub(r"\1", self.raw(child)) if child.type == "string_content" else self.literal(child)
                if part is None:
                    return None
                parts.append(part)
            return "".join(parts)
        return None

    # -- the walk ----------------------------------------------------------------------------

    def walk(self, node: Node) -> None:
        kind = node.type
        if kind == "command":
            self.command(node)
        elif kind == "pipeline":
            self.pipeline(node)
        elif kind == "command_substitution":
            shown = "`…`" if self.raw(node).startswith("`") else "$(…)"
            self.mark(node, node, "substitution", f"{shown} runs a command and puts its output into the line")
        elif kind == "process_substitution":
            self.mark(node, node, "substitution", f"{self.raw(node)[:2]}…) runs a command and passes it as a file")
        elif kind in _TEXT_NODES and node.named_child_count == 0 and self.expands(node):
            # tree-sitter reads these backquotes (and `<(..)` in a ${..} operand) as text; Bash runs them.
            start = self.chars(node.start_byte)
            for found in re.finditer(r"`[^`]*`?|[<>]\([^)]*\)?", self.raw(node)):
                note = ("`…` runs a command and puts its output into the line" if found[0].startswith("`")
                        else f"{found[0][:2]}…) runs a command and passes it as a file")  # fmt: skip
                self.marks.append(CommandMark(start + found.start(), start + found.end(), "substitution", note))
        elif kind == "file_redirect":
            self.redirect(node)
        elif kind == "redirected_statement":
            self.fed_interpreter(node)
        for child in node.children:
            self.walk(child)

    def expands(self, node: Node) -> bool:
        """Whether Bash expands a word tree-sitter took as text: a default value inside `${..}`, or
        the body of a here-document whose delimiter is not quoted."""
        parent = node.parent
        if parent is not None and parent.type == "expansion":
            return True
        body = node if node.type == "heredoc_body" else parent
        if body is not None and body.type == "heredoc_body" and body.parent is not None:
            start = next((c for c in body.parent.children if c.type == "heredoc_start"), None)
            return start is not None and not any(q in self.raw(start) for q in "'\"\\")
        return False

    def names(self, command: Node) -> list[tuple[Node, str | None, list[Node]]]:
        """The command's name word, its value and its arguments; then, through wrappers (`sudo`,
        `env`, `timeout`, ...), the command each of them starts."""
        name_node = command.child_by_field_name("name")
        if name_node is None:
            return []
        words = [c for c in command.children if c.is_named and c.type not in ("command_name", "variable_assignment",
                 "file_redirect", "heredoc_redirect", "herestring_redirect", "comment")]  # fmt: skip
        head = name_node.named_children[0] if name_node.named_children else name_node
        found = [(head, self.literal(head), words)]
        while found[-1][1] in _WRAPPERS and found[-1][2]:
            rest = found[-1][2]
            i = 0
            while i < len(rest):
                value = self.literal(rest[i])
                if value is None or not (value.startswith("-") or "=" in value or re.fullmatch(r"[0-9.]+[smhd]?", value)):
                    break
                i += 2 if value in _WRAPPER_VALUES else 1
            if i >= len(rest):
                break
            found.append((rest[i], self.literal(rest[i]), rest[i + 1 :]))
        return found

    def command(self, node: Node) -> None:
        for child in node.children:
            if child.type == "variable_assignment" and child.children:
                variable = self.raw(child.children[0])
                if _CODE_VARIABLES.match(variable):
                    self.mark(child, child, "environment", f"{variable}=… can make the command run other programs or code")
        names = self.names(node)
        fed = next((c for c in node.children if c.type in ("herestring_redirect", "heredoc_redirect")), None)
        runner = next((w for w, n, _ in names if interpreter(n) is not None), None)
        if fed is not None and runner is not None:
            operator = next((self.raw(c) for c in fed.children if not c.is_named), "<<<")
            self.mark(runner, runner, "code", f"{self.raw(runner)} runs the code it reads from {operator}")
        for i, (word, name, args) in enumerate(names):
            if name is None:
                if i == 0:
                    self.mark(word, word, "dynamic", "the command's name is only known when it runs")
                continue
            if i == 0 and name != self.raw(word):
                self.mark(word, word, "obscured", f"the command's name is spelt with quotes or escapes: it is {name!r}")
            values = [self.literal(a) for a in args]
            base = name.rsplit("/", 1)[-1]
            if base == "eval":
                self.mark(word, word, "eval", "eval runs its arguments as shell code")
            elif base in ("source", "."):
                self.mark(word, word, "source", f"{base} runs the commands in a file in this shell")
            elif (family := interpreter(name)) is not None and (option := _code_option(family, values)) is not None:
                end = args[values.index(option)]
                self.mark(word, end, "code", f"{base} {option} runs its text as code")
            elif (option := _decoding(base, values)) is not None:
                end = args[values.index(option)] if option in values else word
                self.mark(word, end, "decode", f"{base} {option} decodes text the dialog cannot show".replace("  ", " "))
            elif base == "find":
                self.find(args, values)
            elif base in _TEXT_RUNNERS:
                self.text_runner(word, base, args, values)
            self.effects(word, base, args, values)

    def text_runner(self, word: Node, base: str, args: list[Node], values: list[str | None]) -> None:
        options = _TEXT_RUNNERS[base]
        if options is None:
            self.mark(word, word, "code", f"{base} runs text as a shell command")
            return
        for arg, value in zip(args, values, strict=True):
            if value in options or (value and re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", value) and "-c" in options):
                self.mark(word, arg, "code", f"{base} {value} runs its text as a shell command")
                return

    def effects(self, word: Node, base: str, args: list[Node], values: list[str | None]) -> None:
        """The options that run code or write files, as the permission rules read them (`command_effects`)."""
        found = effects([base, *values])
        words = [word, *args]
        for risk in found.runs:
            if risk.at < len(words):  # past the words: a program read from the input, which the pipe marks show
                self.mark(words[risk.at], words[risk.at], "runs", risk.reason)
        for at, path in found.reads:
            if path is not None and _outside(path):
                self.mark(words[at], words[at], "read", f"{base} reads {path}")
        for at, path in found.writes:
            if path in _HARMLESS_TARGETS or path == ".":
                continue
            verb = "removes" if base in _REMOVERS else "writes to"
            shown = path if path is not None else "a file only known when it runs"
            self.mark(words[at], words[at], "write", f"{base} {verb} {shown}")

    def find(self, args: list[Node], values: list[str | None]) -> None:
        for arg, value in zip(args, values, strict=True):
            if value in ("-exec", "-execdir", "-ok", "-okdir"):
                self.mark(arg, arg, "runs", f"find {value} runs a command on each file it finds")
            elif value == "-delete":
                self.mark(arg, arg, "write", "find -delete removes the files it finds")
            elif value in ("-fprint", "-fprint0", "-fprintf", "-fls"):
                self.mark(arg, arg, "write", f"find {value} writes a file")

    def pipeline(self, node: Node) -> None:
        stages: list[Node] = []
        parent = node.parent
        if node.children and node.children[0].type in ("|", "|&") and parent is not None:
            # `cat <<EOF | sh`: tree-sitter hangs the pipe under the here-document's redirect.
            statement = parent.parent if parent.type == "heredoc_redirect" else None
            body = statement.child_by_field_name("body") if statement is not None else None
            if body is not None:
                stages.append(body)
        pipe: Node | None = None
        for child in node.children:
            if child.type in ("|", "|&"):
                pipe = child
                continue
            if not child.is_named:
                continue
            if pipe is not None and stages:
                self.into(pipe, child, stages)
            stages.append(child)
            pipe = None

    def stage_names(self, stage: Node) -> list[tuple[Node, str | None, list[Node]]]:
        if stage.type == "redirected_statement":
            body = stage.child_by_field_name("body")
            return self.stage_names(body) if body is not None else []
        return self.names(stage) if stage.type == "command" else []

    def into(self, pipe: Node, stage: Node, before: list[Node]) -> None:
        names = self.stage_names(stage)
        runner = next(((w, n) for w, n, _ in names if interpreter(n) is not None), None)
        downloads = [n for s in before for _, n, _ in self.stage_names(s) if n in _DOWNLOADERS]
        receiver = next((n for _, n, _ in reversed(names) if n is not None), None) or "another command"
        if runner is not None:
            word, name = runner
            self.mark(pipe, word, "pipe-run", f"| {name} runs what the pipe feeds it as code")
        if downloads:
            self.mark(pipe, pipe, "download", f"{downloads[0]}'s download is piped into {receiver}")

    def redirect(self, node: Node) -> None:
        operator = next((self.raw(c) for c in node.children if not c.is_named), "")
        target = next((c for c in node.named_children if c.type != "file_descriptor"), None)
        value = self.literal(target) if target is not None else None
        if operator == "<" and value is not None and _outside(value):
            self.mark(node, node, "read", f"< reads {value}")
        if operator not in _WRITE_OPERATORS:
            return
        if target is not None and target.type == "number" and operator == ">&":
            return  # `2>&1` joins two outputs, it writes no file
        if value in _HARMLESS_TARGETS or value == "-":
            return
        self.mark(node, node, "write", f"{operator} writes to {value if value is not None else self.raw(target or node)}")

    def fed_interpreter(self, node: Node) -> None:
        """`python3 <<EOF`, `bash < script.sh`, `sh <<< "$x"`: an interpreter reading its code from stdin."""
        body = node.child_by_field_name("body")
        if body is None or body.type != "command":
            return
        names = self.names(body)
        runner = next((w for w, n, _ in names if interpreter(n) is not None), None)
        if runner is None:
            return
        for child in node.children:
            operator = next((self.raw(c) for c in child.children if not c.is_named), "")
            if child.type in ("heredoc_redirect", "herestring_redirect") or (child.type == "file_redirect" and operator == "<"):
                name = self.raw(runner)
                self.mark(runner, runner, "code", f"{name} runs the code it reads from {operator}")
                return


def _outside(path: str) -> bool:
    """Whether a path names something outside the working folder whatever it is: absolute, in a
    home folder, or climbing out with `..` (devices and the like excepted)."""
    if path in _HARMLESS_TARGETS or path.startswith(("/dev/", "-")):
        return False
    return path.startswith(("/", "~")) or ".." in path.split("/")


def command_marks(command: str) -> tuple[list[CommandMark], bool]:
    """The marks of a Bash command line, in order, and whether the parser read the whole line."""
    finder = _Finder(command)
    marks = sorted(finder.marks, key=lambda m: (m.start, -m.end))
    return marks, finder.complete


# What the permission parser reports that the marks already show (a substitution, a line it could
# not read, control characters).
_SHOWN_BY_MARKS = {"command substitution runs another command", "the shell parser could not read the whole line",
                   "control characters in the command"}  # fmt: skip


def parse_hazards(command: str) -> list[str]:
    """What the permission rules' own parse found that could run code no rule names, besides what
    the marks show: `${x@P}`, arithmetic on variables, function definitions, unknown syntax."""
    return [h for h in parse_line(command).hazards if h not in _SHOWN_BY_MARKS]
