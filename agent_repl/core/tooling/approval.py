"""Whether a tool call that is not read-only may run: the permission mode first, then rules, then the user.

- plan mode refuses everything that is not read-only, except ExitPlanMode (the way out);
- Edit and Write: deny and allow rules decide first; in acceptEdits a file inside the project is
  changed without asking; otherwise the user sees the diff. "Yes, and don't ask again" switches
  the session to acceptEdits, as Claude Code does; a file outside the project is asked every time;
- ExitPlanMode: the user approves the plan (then acceptEdits or default) or keeps planning;
- anything else (Bash) goes through the permission policy's rules and prompt; with the OS
  sandbox in auto-allow mode, a sandboxed command the parse fully accounts for runs unasked,
  and a request to run outside the sandbox is always asked (never saved as a rule).

A "no" may carry the user's words for the model. With nobody to ask (print mode), the call is denied.

An answer may carry an updated input (a program driving the agent rewrote the call): the
approver keeps it in `updated_input` and the call runs with it.

A PreToolUse hook's decision comes before the rules' and the mode's: "ask" asks the user even
where a rule or acceptEdits would allow; "allow" spares the question, but never overrides a
deny rule (one that may apply is asked) or plan mode. ("deny" never gets here.)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel

from agent_repl.core.permissions.mode import PLAN_MODE_REFUSAL, ModeHolder, PermissionMode, denied_text
from agent_repl.core.permissions.rules import (
    Answer,
    ApprovalCallback,
    Decision,
    PermissionPolicy,
    PermissionRequest,
    as_answer,
)
from agent_repl.core.sandbox import Sandbox
from agent_repl.core.tooling.diffs import FileChange
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput

EXIT_PLAN_MODE = "ExitPlanMode"
HookDecision = Literal["allow", "ask"] | None


def _denied(output: ToolOutput) -> ToolOutput:
    output.denied = True
    return output


@dataclass
class Approver:
    policy: PermissionPolicy
    ask: ApprovalCallback | None
    mode: ModeHolder
    sandbox: Sandbox | None = None
    # The call being decided, passed on to whoever is asked.
    tool_input: dict[str, Any] | None = None
    tool_use_id: str = ""
    # Set when an allowing answer replaced the call's input.
    updated_input: dict[str, Any] | None = None

    def _about_call(self, request: PermissionRequest) -> PermissionRequest:
        return replace(request, tool_input=self.tool_input, tool_use_id=self.tool_use_id)

    async def approve(
        self, tool: Tool, args: BaseModel, ctx: ToolContext, preview: Any, hook: HookDecision = None, hook_reason: str = ""
    ) -> ToolOutput | None:
        """None when the call may run, else the error result the model gets instead."""
        asked = tool.permission_request(args, ctx)
        if asked is None and hook != "ask":
            return None
        request = self._about_call(replace(asked or PermissionRequest(tool_name=tool.name, key=""), preview=preview))
        mode = self.mode.mode
        if tool.name == EXIT_PLAN_MODE:
            return await self._plan_exit(request)
        if mode is PermissionMode.PLAN:
            return _denied(ToolOutput.error(PLAN_MODE_REFUSAL, summary=f"plan mode: {tool.name} not run"))
        if hook is not None:
            return self._refused(request, await self._hooked(request, hook, hook_reason))
        if tool.edits_files:
            answer = await self._edit(request, preview)
        elif request.unsandboxed:
            if self.sandbox is not None and not self.sandbox.settings.allow_unsandboxed:
                text = "Not run: commands may not run outside the sandbox here (the setting sandbox.allow_unsandboxed is off)."
                return _denied(ToolOutput.error(text, summary="denied: outside the sandbox"))
            answer = await self._unsandboxed(request)
        elif self._auto_allow_problem(request) is None:
            return None
        else:
            try:
                answer = await self.policy.answer(request, self.ask)
            except Exception:  # the prompt was closed (end of input) or broke: nobody approved, so deny
                answer = Answer(Decision.DENY)
        return self._refused(request, answer)

    async def approve_read(
        self, request: PermissionRequest, hook: HookDecision = None, hook_reason: str = ""
    ) -> ToolOutput | None:
        """A reading tool's path: inside the project it runs, outside it is asked (denied with nobody to ask)."""
        request = self._about_call(request)
        if hook is not None:
            return self._refused(request, await self._hooked(request, hook, hook_reason))
        try:
            answer = await self.policy.answer(request, self.ask)
        except Exception:  # a closed or broken prompt approves nothing
            answer = Answer(Decision.DENY)
        return self._refused(request, answer)

    def _refused(self, request: PermissionRequest, answer: Answer) -> ToolOutput | None:
        if answer.decision is not Decision.DENY:
            self.updated_input = answer.updated_input
            return None
        what = f" with {request.key!r}" if request.key else ""
        text = denied_text(request.tool_name, what, answer.feedback)
        ruled = self.policy.evaluate(request)
        if request.unsandboxed and not answer.feedback:
            why = (
                "a run OUTSIDE the sandbox is always asked of the user, and nobody can be asked here"
                if self.ask is None
                else "the user did not approve running it OUTSIDE the sandbox"
            )
            text = f"{text}\nWhy: {why}."
        elif not answer.feedback and ruled.decision is not Decision.DENY and self.ask is None and (
            problem := self._auto_allow_problem(request)
        ):
            text = f"{text}\nWhy: the sandbox runs commands unasked, but not this one: {problem}."
        elif not answer.feedback and (ruled.decision is Decision.DENY or self.ask is None):
            text = f"{text}\nWhy: {ruled.reason}."  # a rule or a refusal decided, not the user: say which
        return _denied(ToolOutput.error(text, summary=f"denied: {request.tool_name}{what}"))

    async def _hooked(self, request: PermissionRequest, hook: Literal["allow", "ask"], reason: str) -> Answer:
        ruled = self.policy.deny_rules_say(request)
        if ruled.decision is Decision.DENY:
            return Answer(Decision.DENY)
        protected = self.policy.protected_write(request)
        if hook == "allow" and ruled.decision is not None and not protected:
            return Answer(Decision.ALLOW_ONCE)
        why = f"a PreToolUse hook asks: {reason}" if hook == "ask" and reason else ruled.reason
        why = protected or why  # a hook's "allow" never spares the question for a protected path
        answer = await self._ask(replace(request, reason=why or "a PreToolUse hook asks"))
        # Asked because a hook said so: an "always" answer is this once (no rule to save).
        return replace(answer, decision=Decision.ALLOW_ONCE) if answer.decision is Decision.ALLOW_ALWAYS else answer

    def _auto_allow_problem(self, request: PermissionRequest) -> str | None:
        """Auto-allow mode: None when a sandboxed command may run unasked, else why it is asked
        ("" when auto-allow does not apply to the call at all)."""
        if self.sandbox is None or not self.sandbox.auto_allow or request.tool_name != "Bash":
            return ""
        if self.policy.deny_rules_say(request).decision is not Decision.ALLOW_ONCE:
            return ""  # a deny rule applies, or may: the usual path decides
        from agent_repl.core.permissions.bash_rules import Place  # the shell parser, on the first command
        from agent_repl.core.sandbox.auto_allow import auto_allow_problem

        cwd = request.cwd or self.policy.roots[0]
        return auto_allow_problem(request.key, Place(cwd, self.policy.roots or (cwd,)))

    async def _unsandboxed(self, request: PermissionRequest) -> Answer:
        """The model asks to run a command outside the sandbox: the user decides, every time."""
        ruled = self.policy.deny_rules_say(request)
        if ruled.decision is Decision.DENY:
            return Answer(Decision.DENY)
        answer = await self._ask(replace(request, reason="the model asks to run this OUTSIDE the sandbox", always_rules=()))
        return replace(answer, decision=Decision.ALLOW_ONCE) if answer.decision is Decision.ALLOW_ALWAYS else answer

    async def _ask(self, request: PermissionRequest) -> Answer:
        if self.ask is None:
            return Answer(Decision.DENY)
        try:
            return as_answer(await self.ask(request))
        except Exception:  # a closed or broken prompt approves nothing
            return Answer(Decision.DENY)

    async def _edit(self, request: PermissionRequest, preview: Any) -> Answer:
        ruled = self.policy.check(request)
        if ruled is not None:
            return Answer(ruled)
        outside = isinstance(preview, FileChange) and preview.outside_project
        protected = self.policy.protected_write(request)
        if self.mode.mode is PermissionMode.ACCEPT_EDITS and not outside and not protected:
            return Answer(Decision.ALLOW_ONCE)
        answer = await self._ask(replace(request, reason=protected) if protected else request)
        if answer.decision is Decision.ALLOW_ALWAYS:
            if outside or protected:  # asked every time: "always" is this once
                return replace(answer, decision=Decision.ALLOW_ONCE)
            self.mode.set(PermissionMode.ACCEPT_EDITS)
        return answer

    async def _plan_exit(self, request: PermissionRequest) -> ToolOutput | None:
        if self.mode.mode is not PermissionMode.PLAN:
            return ToolOutput.error(
                "Plan mode is not on, so there is no plan to approve; go ahead with the work.",
                summary="not in plan mode",
            )
        answer = await self._ask(request)
        if answer.decision is Decision.DENY:
            if self.ask is None:
                text = "Nobody can approve the plan in this session (non-interactive); stop here and present the plan."
            elif answer.feedback.strip():
                text = f"The user wants to keep planning and said: {answer.feedback.strip()}\nRevise the plan; stay in plan mode."
            else:
                text = "The user did not approve the plan and wants to keep planning. Ask what to change; stay in plan mode."
            return _denied(ToolOutput.error(text, summary="plan not approved"))
        approved = PermissionMode.ACCEPT_EDITS if answer.decision is Decision.ALLOW_ALWAYS else PermissionMode.DEFAULT
        self.mode.set(approved)
        return None
