"""Permission rules and the approval flow.

Rules look like Claude Code's: `Bash` (every command), `Bash(make test)` (exactly that command),
`Bash(git status:*)` or `Bash(git status *)` (that prefix), `Read(//etc/hosts)` or
`Read(~/notes/**)` (paths, gitignore style; they cover Grep and Glob too), `mcp__github__create_issue`
(one MCP tool), `mcp__github` or `mcp__github__*` (every tool of that server). Deny rules are
checked first and always apply. Bash lines are decided on their parse (`bash_rules`); reading
tools on the resolved path (`read_access`). What no rule decides is asked through the injected
callback; with no callback (print mode) it is denied.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_repl.core.model.mcp_config import MCP_TOOL_PREFIX, server_of_tool
from agent_repl.core.permissions.protected_paths import protected_reason
from agent_repl.core.permissions.read_access import PathPattern, inside, refusal, resolved

if TYPE_CHECKING:
    from agent_repl.core.permissions.bash_rules import CommandPattern, Place

_RULE = re.compile(r"^(?P<tool>[A-Za-z0-9_-]+\*?)(?:\((?P<spec>.*)\))?$", re.DOTALL)
# Rules written for Read cover every tool that only reads files.
READ_RULE_TOOL = "Read"


class Decision(StrEnum):
    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"
    DENY = "deny"


@dataclass(frozen=True)
class PermissionRequest:
    tool_name: str
    # What rules match against: the command line for Bash, the absolute path for a reading tool.
    key: str
    description: str = ""
    # What the prompt shows besides the key: a `FileChange` (its diff) for Edit and Write.
    preview: Any = None
    # The directory a Bash command runs in (Bash keeps its own across calls).
    cwd: Path | None = None
    # A reading tool: `key` is a path (a folder it searches when `directory`).
    reads: bool = False
    directory: bool = False
    # A tool that writes the file named by `key` (Edit, Write): a protected path always asks.
    writes: bool = False
    # Filled in by the policy before it asks: what "always allow" saves (empty: not offered) and why it asks.
    always_rules: tuple[str, ...] = ()
    reason: str = ""
    # Bash asked to run outside the OS sandbox (`dangerouslyDisableSandbox`): always asked, never saved.
    unsandboxed: bool = False
    # The call as the model wrote it, for a front end that shows or answers with the whole input.
    tool_input: dict[str, Any] | None = None
    tool_use_id: str = ""

    def always_rule(self) -> str | None:
        """The rules "always allow" saves, as one line for a dialog; None when it is not offered."""
        return ", ".join(self.always_rules) or None


@dataclass(frozen=True)
class Answer:
    """A user's answer to a permission prompt: the decision and, for a "no", what to do instead."""

    decision: Decision
    feedback: str = ""
    # A "yes" may change the call: the tool runs with this input instead of the model's.
    updated_input: dict[str, Any] | None = None
    # Esc or Ctrl+C at the question: a "no" that also stops the turn.
    interrupt: bool = False


def as_answer(value: Decision | Answer) -> Answer:
    return value if isinstance(value, Answer) else Answer(value)


ApprovalCallback = Callable[[PermissionRequest], Awaitable[Decision | Answer]]


@dataclass(frozen=True)
class Rule:
    tool: str
    spec: str | None

    @classmethod
    def parse(cls, text: str) -> Rule:
        match = _RULE.match(text.strip())
        if not match:
            raise ValueError(f"not a permission rule: {text!r} (expected Tool or Tool(command) or Tool(prefix:*))")
        spec = match["spec"]
        return cls(match["tool"], None if spec is None or spec.strip() in ("", "*") else spec.strip())

    def names(self, tool_name: str) -> bool:
        """Whether the rule is about this tool: its exact name, or its MCP server's."""
        if self.tool == tool_name:
            return True
        server = server_of_tool(tool_name)
        return server is not None and self.tool in (f"{MCP_TOOL_PREFIX}{server}", f"{MCP_TOOL_PREFIX}{server}__*")

    @property
    def text(self) -> str:
        return self.tool if self.spec is None else f"{self.tool}({self.spec})"

    @cached_property
    def command(self) -> CommandPattern:
        from agent_repl.core.permissions.bash_rules import CommandPattern  # the shell parser, on first use

        return CommandPattern.parse(self.spec or "")

    def path(self, cwd: Path) -> PathPattern:
        return PathPattern.parse(self.spec or "**", cwd=cwd)


@dataclass(frozen=True)
class Evaluation:
    """What the rules say about one request: ALLOW_ONCE, DENY, or None (ask), and why."""

    decision: Decision | None
    reason: str
    rule: str | None = None
    # What "always allow" would save when the user is asked.
    always_rules: tuple[str, ...] = ()


@dataclass
class PermissionPolicy:
    allow: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)
    skip_all: bool = False
    # The project and any --add-dir folders: reads inside them run, redirections into them may be approved.
    roots: tuple[Path, ...] = ()
    _asking: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    @classmethod
    def from_rules(
        cls, allow: Iterable[str], deny: Iterable[str], *, skip_all: bool = False, roots: Iterable[Path] = ()
    ) -> PermissionPolicy:
        return cls(
            [Rule.parse(r) for r in allow], [Rule.parse(r) for r in deny], skip_all, tuple(resolved(r) for r in roots)
        )

    def add_allow(self, rule_text: str) -> None:
        rule = Rule.parse(rule_text)
        if rule not in self.allow:
            self.allow.append(rule)

    def evaluate(self, request: PermissionRequest) -> Evaluation:
        if request.reads:
            return self._evaluate_read(request)
        if request.tool_name == "Bash":
            return self._evaluate_bash(request)
        return self._evaluate_tool(request)

    def deny_rules_say(self, request: PermissionRequest) -> Evaluation:
        """What the deny rules alone say (a PreToolUse hook's allow still meets them): DENY, None
        when one may apply (ask), ALLOW_ONCE when none does."""
        only_deny = PermissionPolicy([Rule(request.tool_name, None)], self.deny, roots=self.roots)
        return only_deny.evaluate(request)

    def protected_write(self, request: PermissionRequest) -> str | None:
        """Why a write tool's request must be asked whatever the mode and rules say, or None."""
        if not request.writes or not request.key:
            return None
        return protected_reason(request.key)

    def check(self, request: PermissionRequest) -> Decision | None:
        """ALLOW_ONCE or DENY when the rules decide, None when the user must be asked."""
        return self.evaluate(request).decision

    async def decide(self, request: PermissionRequest, ask: ApprovalCallback | None) -> Decision:
        return (await self.answer(request, ask)).decision

    async def answer(self, request: PermissionRequest, ask: ApprovalCallback | None) -> Answer:
        """The decision with the user's words when they said no and told the model what to do instead."""
        evaluation = self.evaluate(request)
        if evaluation.decision is not None:
            return Answer(evaluation.decision)
        if ask is None:
            return Answer(Decision.DENY)
        async with self._asking:  # one question at a time, even for reads that run side by side
            evaluation = self.evaluate(request)  # an answer given meanwhile may decide this one
            if evaluation.decision is not None:
                return Answer(evaluation.decision)
            answer = as_answer(await ask(replace(request, always_rules=evaluation.always_rules,
                                                 reason=evaluation.reason)))  # fmt: skip
            if answer.decision is Decision.ALLOW_ALWAYS:
                if not evaluation.always_rules:
                    return replace(answer, decision=Decision.ALLOW_ONCE)
                for rule in evaluation.always_rules:
                    self.add_allow(rule)
        return answer

    # -- per kind of request -----------------------------------------------------------------

    def _rules(self, rules: list[Rule], tool: str) -> list[Rule]:
        return [rule for rule in rules if rule.names(tool)]

    def _place(self, request: PermissionRequest) -> Place:
        from agent_repl.core.permissions.bash_rules import Place

        roots = self.roots or (resolved(request.cwd or Path.cwd()),)
        read_allow = [r for r in self.allow if r.tool == READ_RULE_TOOL]
        read_deny = [r for r in self.deny if r.tool == READ_RULE_TOOL]
        return Place(
            resolved(request.cwd) if request.cwd else roots[0],
            roots,
            read_allow=tuple(r.path(roots[0]) for r in read_allow if r.spec is not None),
            read_deny=tuple(r.path(roots[0]) for r in read_deny if r.spec is not None),
            read_anywhere=any(r.spec is None for r in read_allow),
        )

    def _evaluate_tool(self, request: PermissionRequest) -> Evaluation:
        """Other tools (Edit, Write ...): a bare rule covers every call, `Tool(path)` the paths it matches."""
        cwd = self._place(request).roots[0]

        def matching(rules: list[Rule]) -> Rule | None:
            return next((r for r in self._rules(rules, request.tool_name) if r.spec is None or (
                r.spec == request.key or r.path(cwd).matches(resolved(request.key))
                if request.key.startswith("/") else r.spec == request.key)), None)  # fmt: skip

        if deny := matching(self.deny):
            return Evaluation(Decision.DENY, f"denied by {deny.text}", deny.text)
        if protected := self.protected_write(request):
            return Evaluation(None, protected)  # in every mode, under any rule; never "always"
        if self.skip_all:
            return Evaluation(Decision.ALLOW_ONCE, "permissions are skipped")
        if allow := matching(self.allow):
            return Evaluation(Decision.ALLOW_ONCE, f"allowed by {allow.text}", allow.text)
        return Evaluation(None, f"{request.tool_name} asks first", always_rules=(request.tool_name,))

    def _evaluate_bash(self, request: PermissionRequest) -> Evaluation:
        from agent_repl.core.permissions.bash_rules import (  # the shell parser, on the first command
            allow_problem,
            deny_match,
            narrowest_rules,
            parse_command,
            protected_write_problem,
        )

        deny, allow = self._rules(self.deny, "Bash"), self._rules(self.allow, "Bash")
        if whole := next((r for r in deny if r.spec is None), None):
            return Evaluation(Decision.DENY, f"denied by {whole.text}", whole.text)
        line = parse_command(request.key)
        place = self._place(request)
        matched, uncertain = deny_match(line, [r.command for r in deny])
        if matched is not None:
            return Evaluation(Decision.DENY, f"denied by Bash({matched.text})", f"Bash({matched.text})")
        if deny and uncertain:
            return Evaluation(None, f"a deny rule may apply: {uncertain[0]}")
        if protected := protected_write_problem(line, place):
            return Evaluation(None, protected)  # in every mode, under any rule; never "always"
        if self.skip_all:
            return Evaluation(Decision.ALLOW_ONCE, "permissions are skipped")
        if whole := next((r for r in allow if r.spec is None), None):
            return Evaluation(Decision.ALLOW_ONCE, f"allowed by {whole.text}", whole.text)
        problem = allow_problem(line, [r.command for r in allow], place) if allow else "no allow rule for Bash"
        if problem is None:
            return Evaluation(Decision.ALLOW_ONCE, "allowed by the Bash rules")
        suggestions = tuple(r for r in narrowest_rules(line, place) if Rule.parse(f"Bash({r})") not in allow)
        return Evaluation(None, problem, always_rules=tuple(f"Bash({r})" for r in suggestions))

    def _evaluate_read(self, request: PermissionRequest) -> Evaluation:
        refused = refusal(request.key)
        if refused:
            return Evaluation(Decision.DENY, refused)
        path = resolved(request.key)
        place = self._place(request)
        tools = {request.tool_name, READ_RULE_TOOL}
        for rule in (r for r in self.deny if r.tool in tools):
            if rule.spec is None or rule.path(place.roots[0]).matches(path, directory=request.directory):
                return Evaluation(Decision.DENY, f"denied by {rule.text}", rule.text)
        if self.skip_all:
            return Evaluation(Decision.ALLOW_ONCE, "permissions are skipped")
        if inside(path, place.roots):
            return Evaluation(Decision.ALLOW_ONCE, "inside the project")
        for rule in (r for r in self.allow if r.tool in tools):
            if rule.spec is None or rule.path(place.roots[0]).matches(path, directory=request.directory):
                return Evaluation(Decision.ALLOW_ONCE, f"allowed by {rule.text}", rule.text)
        suffix = "/**" if request.directory else ""
        return Evaluation(
            None, f"{path} is outside the project", always_rules=(f"{request.tool_name}(/{path.as_posix()}{suffix})",)
        )
