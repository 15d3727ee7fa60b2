"""Permission rules and the approval flow for tools that are not read-only.

Rules look like Claude Code's: `Bash` (every command), `Bash(git status)` (exactly that command),
`Bash(git status:*)` (that prefix); `mcp__github__create_issue` (one MCP tool), `mcp__github` or
`mcp__github__*` (every tool of that server). Deny beats allow. A tool without a rule asks the injected
approval callback; with no callback (print mode) the call is denied.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from agent_repl.core.mcp_config import MCP_TOOL_PREFIX, server_of_tool

_RULE = re.compile(r"^(?P<tool>[A-Za-z0-9_-]+\*?)(?:\((?P<spec>.*)\))?$", re.DOTALL)


class Decision(StrEnum):
    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"
    DENY = "deny"


@dataclass(frozen=True)
class PermissionRequest:
    tool_name: str
    # What rules match against: the command, for Bash.
    key: str
    description: str = ""
    # What the prompt shows besides the key: a `FileChange` (its diff) for Edit and Write.
    preview: Any = None

    def always_rule(self) -> str:
        """The rule `allow always` adds: the command's first word(s) as a prefix."""
        if not self.key:
            return self.tool_name
        words = self.key.split()
        prefix = " ".join(words[:2]) if len(words) > 1 and not words[1].startswith("-") else words[0]
        return f"{self.tool_name}({prefix}:*)"


@dataclass(frozen=True)
class Answer:
    """A user's answer to a permission prompt: the decision and, for a "no", what to do instead."""

    decision: Decision
    feedback: str = ""


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
        return cls(match["tool"], match["spec"])

    def names(self, tool_name: str) -> bool:
        """Whether the rule is about this tool: its exact name, or its MCP server's."""
        if self.tool == tool_name:
            return True
        server = server_of_tool(tool_name)
        return server is not None and self.tool in (f"{MCP_TOOL_PREFIX}{server}", f"{MCP_TOOL_PREFIX}{server}__*")

    def matches(self, tool_name: str, key: str) -> bool:
        if not self.names(tool_name):
            return False
        if self.spec is None or self.spec in ("", "*"):
            return True
        if self.spec.endswith(":*"):
            prefix = self.spec[:-2]
            return key == prefix or key.startswith(prefix + " ")
        return key == self.spec


# What chains, substitutes (`$(..)`, `>(..)`) or redirects: a prefix rule never approves it.
_SHELL_OPERATORS = re.compile(r"[;&|`\n<>]|\$\(")
# Where one simple command inside a command line ends and the next may begin.
_COMMAND_BREAKS = re.compile(r"[;&|`\n(){}]|\$\(|[<>]\(")


def _has_shell_chaining(command: str) -> bool:
    """A prefix rule must not approve `git status; rm -rf ~` or `echo >(rm x)`: those are always asked."""
    return bool(_SHELL_OPERATORS.search(command))


def _command_parts(command: str) -> list[str]:
    """The command line and each simple command in it: a deny rule for `rm` also stops `ls; rm x`.

    A guard against ordinary phrasing, not a sandbox: `env rm` or `/bin/rm` are not recognized.
    """
    return [command, *(part.strip() for part in _COMMAND_BREAKS.split(command) if part.strip())]


@dataclass
class PermissionPolicy:
    allow: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)
    skip_all: bool = False

    @classmethod
    def from_rules(cls, allow: Iterable[str], deny: Iterable[str], *, skip_all: bool = False) -> PermissionPolicy:
        return cls([Rule.parse(r) for r in allow], [Rule.parse(r) for r in deny], skip_all)

    def add_allow(self, rule_text: str) -> None:
        self.allow.append(Rule.parse(rule_text))

    def check(self, request: PermissionRequest) -> Decision | None:
        """ALLOW_ONCE or DENY when a rule decides, None when the user must be asked."""
        parts = _command_parts(request.key)
        if any(rule.matches(request.tool_name, part) for rule in self.deny for part in parts):
            return Decision.DENY
        if self.skip_all:
            return Decision.ALLOW_ONCE
        for rule in self.allow:
            if rule.matches(request.tool_name, request.key):
                exact_or_whole_tool = rule.spec is None or not rule.spec.endswith(":*")
                if exact_or_whole_tool or not _has_shell_chaining(request.key):
                    return Decision.ALLOW_ONCE
        return None

    async def decide(self, request: PermissionRequest, ask: ApprovalCallback | None) -> Decision:
        return (await self.answer(request, ask)).decision

    async def answer(self, request: PermissionRequest, ask: ApprovalCallback | None) -> Answer:
        """The decision with the user's words when they said no and told the model what to do instead."""
        ruled = self.check(request)
        if ruled is not None:
            return Answer(ruled)
        if ask is None:
            return Answer(Decision.DENY)
        answer = as_answer(await ask(request))
        if answer.decision is Decision.ALLOW_ALWAYS:
            self.add_allow(request.always_rule())
        return answer
