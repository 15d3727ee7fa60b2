"""A Bash command line read with tree-sitter-bash: its simple commands, their words and
redirections, and everything in it that could run code no permission rule names.

The walk is a whitelist: a node type it does not know is recorded as a hazard (so a prefix rule
never approves the line) and as uncertain (so a deny rule cannot vouch for it either).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from functools import cache

from tree_sitter import Language, Node, Parser

# Expansion operators that only read or reshape a value; `:=`, `=`, `:` offsets, `!` and `@P` can run code.
_SAFE_EXPANSION_OPS = {":-", "-", ":+", "+", ":?", "?", "#", "##", "%", "%%", "/", "//", "/#", "/%",
                       "^", "^^", ",", ",,"}  # fmt: skip
_SAFE_TRANSFORMS = set("QEULuaAKk")
# Arithmetic made of these node types only (numbers and operators) cannot run anything.
_LITERAL_ARITHMETIC = {"number", "binary_expression", "unary_expression", "parenthesized_expression",
                       "ternary_expression"}  # fmt: skip
_STATEMENTS = {"program", "list", "pipeline", "compound_statement", "subshell", "do_group", "negated_command",
               "if_statement", "elif_clause", "else_clause", "while_statement", "for_statement", "case_statement",
               "case_item", "redirected_statement"}  # fmt: skip
_WORD_TYPES = {"word", "number", "raw_string", "string", "ansi_c_string", "translated_string", "concatenation",
               "simple_expansion", "expansion", "command_substitution", "process_substitution",
               "arithmetic_expansion", "brace_expression", "extglob_pattern", "regex", "array", "$"}  # fmt: skip
_REDIRECTS = {"file_redirect", "heredoc_redirect", "herestring_redirect"}
# Arithmetic or name-taking builtins that evaluate `a[$(cmd)]` found in the text they are given.
NAME_EVALUATORS = {"declare", "typeset", "local", "export", "readonly", "let", "read", "printf", "unset",
                   "test", "[", "mapfile", "readarray", "getopts", "wait", "shift", "return", "exit"}  # fmt: skip
_CODE_IN_TEXT = re.compile(r"\$[(\[{]|`")
_DQ_ESCAPE = re.compile(r"\\([\\\"$`\n])")
_BACKSLASH = re.compile(r"\\(.)", re.DOTALL)


@cache
def _parser() -> Parser:
    import tree_sitter_bash

    return Parser(Language(tree_sitter_bash.language()))


@dataclass(frozen=True)
class Word:
    text: str
    # After quote removal; None when an expansion makes it unknowable before the command runs.
    value: str | None


@dataclass(frozen=True)
class Redirect:
    operator: str
    target: Word | None = None
    # What a here-document or here-string feeds on stdin; None when it expands at run time.
    body: str | None = None


@dataclass
class SimpleCommand:
    words: list[Word]
    text: str
    assignments: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    # Literal text the previous stage of a pipeline writes into this command (`echo rm x | sh`).
    stdin_text: str | None = None
    # Inside `$(..)`, `<(..)` or backticks: it runs, but as part of a substitution.
    in_substitution: bool = False

    @property
    def argv(self) -> list[str | None]:
        return [word.value for word in self.words]


@dataclass
class ShellLine:
    """`hazards` stop allow rules; `uncertain` are the hazards that hide code from deny rules too."""

    text: str
    commands: list[SimpleCommand] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    # Why a prefix rule cannot approve the line (each a short phrase).
    hazards: list[str] = field(default_factory=list)
    # Why a deny rule cannot be sure the line holds no denied command.
    uncertain: list[str] = field(default_factory=list)
    # Whether tree-sitter read the whole line without an error.
    complete: bool = True

    def add_hazard(self, why: str, *, uncertain: bool = False) -> None:
        if why not in self.hazards:
            self.hazards.append(why)
        if uncertain and why not in self.uncertain:
            self.uncertain.append(why)


def syntax_tree(text: str) -> tuple[Node, bytes]:
    """tree-sitter's tree of a command line (its root node) and the bytes its offsets count in."""
    trailing = len(text) - len(text.rstrip("\\"))
    # Bash keeps a lone backslash at the very end as a character; tree-sitter calls it an error.
    source = (text + "\\" if trailing % 2 else text).encode("utf-8", "surrogatepass")
    return _parser().parse(source).root_node, source


def parse_line(text: str) -> ShellLine:
    """Walk the whole line; a parse error is a hazard and leaves deny checks uncertain."""
    line = ShellLine(text)
    root, source = syntax_tree(text)
    if root.has_error:
        line.complete = False
        line.add_hazard("the shell parser could not read the whole line", uncertain=True)
    if any(ord(c) < 32 and c not in "\t\n" or c == "\x7f" for c in text):
        line.add_hazard("control characters in the command")
    _Walker(line, source).statements(root)
    return line


def _decode_ansi_c(body: str) -> str:
    """`$'..'` text as Bash expands it (enough for names: \\xHH, \\NNN, \\uHHHH and the letter escapes)."""
    try:
        return codecs.decode(body.replace("\\'", "'").encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return body


class _Walker:
    def __init__(self, line: ShellLine, source: bytes) -> None:
        self.line = line
        self.source = source
        self.in_substitution = 0
        # Literal stdout of the last finished pipeline stage, handed to the next one.
        self.feed: str | None = None
        # Commands and redirections outside substitutions are recorded from this depth on: an
        # expansion's operand is read as the words of a stand-in command that does not run.
        self.recorded_from = 0

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    # -- statements --------------------------------------------------------------------------

    def statements(self, node: Node) -> None:
        for child in node.children:
            self.statement(child)

    def statement(self, node: Node) -> None:
        kind = node.type
        if kind in ("comment", "variable_name") or not node.is_named:
            return
        if kind == "compound_statement" and node.children and node.children[0].type == "((":
            self.arithmetic(node)
        elif kind == "pipeline":
            self.pipeline(node)
        elif kind == "redirected_statement":
            self.redirected(node)
        elif kind in _STATEMENTS:
            for child in node.children:
                if child.type in _WORD_TYPES:  # `for x in WORDS`, `case WORD in`, patterns
                    self.word(child)
                elif child.type in _REDIRECTS:
                    self.redirect(child, None)
                else:
                    self.statement(child)
        elif kind == "command":
            self.command(node)
        elif kind in ("declaration_command", "unset_command"):
            self.declaration(node)
        elif kind in ("variable_assignment", "variable_assignments"):
            assignments = [node] if kind == "variable_assignment" else list(node.named_children)
            self.add_command([], [self.assignment(a) for a in assignments], node)
        elif kind == "test_command":
            self.test(node)
        elif kind == "function_definition":
            self.line.add_hazard("defines a shell function")
            self.statements(node)
        elif kind == "c_style_for_statement":
            self.arithmetic(node)
            for child in node.children:
                if child.type == "do_group" or child.type == "compound_statement":
                    self.statement(child)
        elif kind in _REDIRECTS:
            self.redirect(node, None)
        elif kind == "ERROR":
            self.statements(node)  # what tree-sitter recovered still counts for deny rules
        elif kind in _WORD_TYPES:
            self.word(node)
        else:
            self.line.add_hazard(f"shell syntax the checker does not know ({kind})", uncertain=True)

    def pipeline(self, node: Node, feed: str | None = None) -> None:
        for child in node.children:
            if not child.is_named:
                continue
            self.feed = feed
            before = len(self.line.commands)
            self.statement(child)
            stage = self.line.commands[before:]
            feed = _stdout_text(stage[0]) if len(stage) == 1 else None
        self.feed = None

    def redirected(self, node: Node) -> None:
        body = node.child_by_field_name("body")
        before = len(self.line.commands)
        if body is not None:
            self.statement(body)
        target = self.line.commands[before] if body is not None and body.type == "command" and len(
            self.line.commands) > before else None  # fmt: skip
        for child in node.children:
            if body is not None and child.id == body.id:
                continue
            if child.type in _REDIRECTS:
                self.redirect(child, target)
            elif child.is_named:
                self.statement(child)

    def command(self, node: Node) -> None:
        words: list[Word] = []
        assignments: list[Word] = []
        redirects: list[Node] = []
        for child in node.children:
            if child.type == "variable_assignment":
                assignments.append(self.assignment(child))
            elif child.type == "command_name":
                words.extend(self.word(grand) for grand in child.named_children)
            elif child.type in _REDIRECTS:
                redirects.append(child)
            elif child.type in _WORD_TYPES:
                words.append(self.word(child))
            elif child.type != "comment":
                self.line.add_hazard(f"shell syntax the checker does not know ({child.type})", uncertain=True)
        command = self.add_command(words, assignments, node)
        for redirect in redirects:
            self.redirect(redirect, command)
        if words and words[0].value == "let":
            self.line.add_hazard("let evaluates arithmetic on variables", uncertain=True)
        elif words and words[0].value in NAME_EVALUATORS:
            self.name_evaluator(command)

    def declaration(self, node: Node) -> None:
        words = [Word(node.children[0].type, node.children[0].type)]
        for child in node.children[1:]:
            if child.type == "variable_assignment":
                words.append(self.assignment(child))
            elif child.type == "variable_name":
                words.append(Word(self.text(child), self.text(child)))
            elif child.type in _WORD_TYPES:
                words.append(self.word(child))
            elif child.type in _REDIRECTS:
                continue
            else:
                self.line.add_hazard(f"shell syntax the checker does not know ({child.type})", uncertain=True)
        command = self.add_command(words, [], node)
        for child in node.children:
            if child.type in _REDIRECTS:
                self.redirect(child, command)
        self.name_evaluator(command)

    def name_evaluator(self, command: SimpleCommand) -> None:
        if any(w.value is not None and _CODE_IN_TEXT.search(w.value) for w in command.words[1:]):
            self.line.add_hazard(f"{command.words[0].value} can evaluate the $(..) in its arguments", uncertain=True)

    def test(self, node: Node, double: bool | None = None) -> None:
        if double is None:
            double = bool(node.children) and node.children[0].type == "[["
        for child in node.children:
            if child.type == "test_operator":
                op = self.text(child)
                if op in ("-v", "-R") or (double and op in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge")):
                    self.line.add_hazard(f"the test {op} evaluates names or arithmetic", uncertain=True)
            elif child.type in _WORD_TYPES:
                word = self.word(child)
                if word.value is not None and _CODE_IN_TEXT.search(word.value):
                    self.line.add_hazard("a test can evaluate the $(..) in its operands", uncertain=True)
            elif child.type in ("variable_name", "subscript"):
                if double:
                    self.line.add_hazard("a [[ ]] test evaluates arithmetic", uncertain=True)
            elif child.type in ("binary_expression", "unary_expression", "parenthesized_expression",
                                "negated_expression", "test_command"):
                self.test(child, double)
            elif child.is_named:
                self.line.add_hazard(f"shell syntax the checker does not know ({child.type})", uncertain=True)

    def arithmetic(self, node: Node) -> None:
        inner = [c for c in node.named_children if c.type not in ("do_group", "compound_statement")]
        stack = list(inner)
        while stack:
            sub = stack.pop()
            if sub.type in ("command_substitution", "process_substitution"):
                self.substitution(sub)
                continue
            if sub.is_named and sub.type not in _LITERAL_ARITHMETIC:
                self.line.add_hazard("arithmetic on variables can run code through array subscripts", uncertain=True)
            stack.extend(sub.children)

    def add_command(self, words: list[Word], assignments: list[Word], node: Node) -> SimpleCommand:
        command = SimpleCommand(words, self.text(node), assignments, in_substitution=self.in_substitution > 0)
        if self.feed is not None:
            command.stdin_text, self.feed = self.feed, None
        if self.in_substitution >= self.recorded_from:
            self.line.commands.append(command)
        return command

    # -- redirections ------------------------------------------------------------------------

    def redirect(self, node: Node, command: SimpleCommand | None) -> None:
        operator = next((self.text(c) for c in node.children if not c.is_named), "")
        if node.type == "heredoc_redirect":
            self.heredoc(node, command, operator)
            return
        target_node = next((c for c in node.named_children if c.type != "file_descriptor"), None)
        target = self.word(target_node) if target_node is not None else None
        body = target.value if node.type == "herestring_redirect" and target else None
        redirect = Redirect(operator, None if node.type == "herestring_redirect" else target, body)
        self.attach(redirect, command)

    def heredoc(self, node: Node, command: SimpleCommand | None, operator: str) -> None:
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        body_node = next((c for c in node.children if c.type == "heredoc_body"), None)
        quoted = start is not None and any(q in self.text(start) for q in "'\"\\")
        body_text = self.text(body_node) if body_node is not None else ""
        expands = False
        if not quoted and "`" in body_text:
            # tree-sitter reads backticks in a here-document as text; Bash runs them.
            self.line.add_hazard("a here-document holds backticks", uncertain=True)
            expands = True
        if body_node is not None and not quoted:
            for child in body_node.named_children:
                if child.type != "heredoc_content":
                    expands = True
                    self.word(child)
        self.attach(Redirect(operator, body=None if expands else body_text), command)
        feed = _stdout_text(command) if command is not None else None
        for child in node.children:
            if child.type in ("heredoc_start", "heredoc_body", "heredoc_end") or not child.is_named:
                continue
            if child.type in _REDIRECTS:
                self.redirect(child, command)
                continue
            if child.type == "pipeline" and child.children and child.children[0].type in ("|", "|&"):
                self.pipeline(child, feed)
            else:
                self.statement(child)

    def attach(self, redirect: Redirect, command: SimpleCommand | None) -> None:
        if self.in_substitution < self.recorded_from:
            return
        self.line.redirects.append(redirect)
        if command is not None:
            command.redirects.append(redirect)

    # -- words -------------------------------------------------------------------------------

    def assignment(self, node: Node) -> Word:
        name = node.children[0] if node.children else None
        if name is not None and name.type == "subscript":
            self.subscript(name)
        value_nodes = [c for c in node.children[1:] if c.is_named]
        operator = next((self.text(c) for c in node.children if not c.is_named), "=")
        values = [self.word(c) for c in value_nodes]
        prefix = (self.text(name) if name is not None else "") + operator
        if any(v.value is None for v in values) or (name is not None and name.type == "subscript"):
            return Word(self.text(node), None)
        return Word(self.text(node), prefix + "".join(v.value or "" for v in values))

    def subscript(self, node: Node) -> None:
        index = [c for c in node.named_children if c.type != "variable_name"]
        if not all(c.type == "number" or self.text(c) in ("@", "*") for c in index):
            self.line.add_hazard("an array subscript is evaluated as arithmetic", uncertain=True)
        for c in index:
            self.word(c)

    def word(self, node: Node) -> Word:
        kind, text = node.type, self.text(node)
        if kind in ("word", "extglob_pattern", "regex"):
            return Word(text, _BACKSLASH.sub(lambda m: "" if m[1] == "\n" else m[1], text))
        if kind == "number" or kind == "variable_name":
            return Word(text, text)
        if kind == "raw_string":
            return Word(text, text[1:-1])
        if kind == "ansi_c_string":
            return Word(text, _decode_ansi_c(text[2:-1]))
        if kind in ("string", "translated_string", "concatenation"):
            parts: list[str | None] = []
            for child in node.children:
                if child.type == '"' or (kind == "translated_string" and child.type == "$"):
                    continue
                if child.type == "string_content":
                    parts.append(_DQ_ESCAPE.sub(lambda m: "" if m[1] == "\n" else m[1], self.text(child)))
                else:
                    parts.append(self.word(child).value)
            known = all(p is not None for p in parts)
            return Word(text, "".join(p for p in parts if p is not None) if known else None)
        if kind == "$":
            return Word(text, "$")
        if kind == "simple_expansion":
            return Word(text, None)
        if kind == "expansion":
            self.expansion(node)
            return Word(text, None)
        if kind in ("command_substitution", "process_substitution"):
            self.substitution(node)
            return Word(text, None)
        if kind == "arithmetic_expansion":
            self.arithmetic(node)
            return Word(text, None)
        if kind in ("brace_expression", "array"):
            for child in node.named_children:
                self.word(child)
            return Word(text, None)
        self.line.add_hazard(f"shell syntax the checker does not know ({kind})", uncertain=True)
        return Word(text, None)

    def substitution(self, node: Node) -> None:
        self.line.add_hazard("command substitution runs another command")
        self.in_substitution += 1
        saved, self.feed = self.feed, None
        try:
            self.statements(node)
        finally:
            self.in_substitution -= 1
            self.feed = saved

    def expansion(self, node: Node) -> None:
        children = node.children[1:-1]  # between `${` and `}`
        if children and children[0].type == "!":
            self.line.add_hazard("indirect expansion ${!..} can evaluate a subscript", uncertain=True)
        i = 0
        while i < len(children):
            child = children[i]
            if child.type == "subscript":
                self.subscript(child)
            elif child.type == "@":
                transform = self.text(children[i + 1]) if i + 1 < len(children) else ""
                if transform not in _SAFE_TRANSFORMS:
                    self.line.add_hazard(f"the expansion ${{..@{transform}}} can run code", uncertain=True)
                i += 1
            elif not child.is_named and i > 0:
                if child.type not in _SAFE_EXPANSION_OPS:
                    offsets = child.type == ":" and all(c.type == "number" or c.type == ":" for c in children[i + 1 :])
                    if child.type == ":" and not offsets:
                        self.line.add_hazard("a substring offset is arithmetic on variables", uncertain=True)
                    elif not offsets:
                        self.line.add_hazard(f"the expansion operator {child.type} assigns a variable")
                self.operand(node, child)
                return
            elif child.is_named and child.type not in ("variable_name", "special_variable_name"):
                self.word(child)
            i += 1

    def operand(self, node: Node, operator: Node) -> None:
        """The text after an expansion's operator (`${x:-TEXT}`), read again as Bash reads it.

        tree-sitter reads backquotes, `<(..)` and quotes there as plain text, where Bash runs
        the substitutions: inside double quotes single quotes are literal and backquotes run;
        unquoted, `<(..)` runs too. The operand is parsed on its own in the same quoting.
        """
        text = self.source[operator.end_byte : node.children[-1].start_byte]
        if not text.strip():
            return
        quoted = _in_double_quotes(node)
        source = b': "' + text + b'"' if quoted else b": " + text
        tree = _parser().parse(source)
        if tree.root_node.has_error:
            self.line.add_hazard("the shell parser could not read an expansion's operand", uncertain=True)
        walker = _Walker(self.line, source)
        walker.in_substitution = self.in_substitution
        walker.recorded_from = self.in_substitution + 1
        before = len(self.line.commands)
        walker.statements(tree.root_node)
        if _has_code(text, quoted) and len(self.line.commands) == before:
            self.line.add_hazard("an expansion's operand holds a substitution the parser could not read", uncertain=True)


def _in_double_quotes(node: Node) -> bool:
    parent = node.parent
    while parent is not None and parent.type not in ("command_substitution", "process_substitution", "program"):
        if parent.type == "string":
            return True
        parent = parent.parent
    return False


def _has_code(text: bytes, quoted: bool) -> bool:
    """An unescaped backquote, `$(`, `<(` or `>(` outside single quotes (which quote only unquoted)."""
    i = 0
    while i < len(text):
        c = text[i : i + 1]
        if c == b"\\":
            i += 2
            continue
        if c == b"'" and not quoted:
            end = text.find(b"'", i + 1)
            i = len(text) if end < 0 else end + 1
            continue
        if c == b"`" or text[i : i + 2] in (b"$(", b"<(", b">("):
            return True
        i += 1
    return False


def _stdout_text(command: SimpleCommand | None) -> str | None:
    """What `echo`/`printf` with literal words or `cat` of a literal here-document prints."""
    if command is None or not command.words:
        return None
    name, args = command.words[0].value, command.argv[1:]
    if name in ("echo", "printf") and all(a is not None for a in args):
        words = [a for a in args if a is not None and not (name == "echo" and a in ("-e", "-n", "-E"))]
        return " ".join(words).replace("\\n", "\n")
    if name == "cat" and not args:
        bodies = [r.body for r in command.redirects if r.operator.startswith("<<")]
        return bodies[0] if len(bodies) == 1 else None
    return None
