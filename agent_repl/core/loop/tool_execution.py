"""Running the tool calls of one assistant reply.

Consecutive read-only calls run concurrently; a call that is not read-only (Bash, Edit, Write)
runs alone, after the tool prepared it (Edit computes its diff, and refuses a stale file before
anyone is asked) and `agent_repl.core.tooling.approval` allowed it. A result over its tool's `max_result_size_chars` is written to the
session's tool-results directory and replaced by its preview here, before it enters history,
so the transcript never holds the full text.

PreToolUse hooks answer before anyone is asked (a denial is the model's result, with the
hook's reason); PostToolUse hooks see a successful result. What they say is carried on the
outcome for the loop to record once every result of the reply is in.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_repl.core.hooks.io import HookOutcome
from agent_repl.core.hooks.runner import HookRunner
from agent_repl.core.model.events import SubagentProgress, ToolProgress
from agent_repl.core.model.messages import TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from agent_repl.core.permissions.credentials import credential_names
from agent_repl.core.permissions.mode import ModeHolder
from agent_repl.core.permissions.rules import (
    Answer,
    ApprovalCallback,
    PermissionPolicy,
    PermissionRequest,
    as_answer,
)
from agent_repl.core.sandbox import Sandbox
from agent_repl.core.tooling.approval import Approver
from agent_repl.core.tooling.file_state import ReadLedger
from agent_repl.core.tooling.persisted_output import is_persisted_preview, persist_text
from agent_repl.core.tooling.redaction import SecretRedactor
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, ToolPorts

INTERRUPTED_BY_USER = "[Request interrupted by user: the tool call was stopped before it finished]"
REJECTED_AND_INTERRUPTED = (
    "The user rejected this {tool} call and stopped the turn: it did not run. Wait for their next message."
)


@dataclass
class ToolCallOutcome:
    tool_use: ToolUseBlock
    output: ToolOutput
    persisted_path: str | None = None
    # What the call's PreToolUse and PostToolUse hooks said (recorded after the reply's results).
    hooks: list[HookOutcome] = field(default_factory=list)

    def to_message(self, *, session_id: str) -> UserMessage:
        block = ToolResultBlock(
            tool_use_id=self.tool_use.id, content=self.output.content, is_error=self.output.is_error
        )
        return UserMessage(
            content=[block],
            session_id=session_id,
            tool_use_result=self.output.structured if self.output.structured is not None else self.output.summary,
            source_tool_use_id=self.tool_use.id,
        )


@dataclass
class ToolRuntime:
    """What executing tools needs from the session."""

    tools: dict[str, Tool]
    cwd: Path
    tool_results_dir: Path
    permissions: PermissionPolicy
    ask: ApprovalCallback | None
    # Shared across calls (Bash keeps its working directory here).
    state: dict[str, Any]
    ports: ToolPorts = field(default_factory=ToolPorts)
    # Takes credentials out of every result before it is stored or persisted.
    redactor: SecretRedactor = field(default_factory=SecretRedactor)
    # The files the model has read or written (Edit and Write check it), kept for the session.
    files: ReadLedger = field(default_factory=ReadLedger)
    mode: ModeHolder = field(default_factory=ModeHolder)
    # Awaited with a path before a tool changes that file (the session's checkpoints).
    before_change: Callable[[Path], Awaitable[None]] | None = None
    # Environment variables no command may get (the agent's credentials).
    scrubbed_env: frozenset[str] = field(default_factory=credential_names)
    hooks: HookRunner | None = None
    # Awaited (in the background) when a permission prompt is about to be shown: Notification hooks.
    notify: Callable[[str, str], Coroutine[Any, Any, None]] | None = None
    # The OS sandbox for Bash commands, when the session has one.
    sandbox: Sandbox | None = None

    def __post_init__(self) -> None:
        if not self.permissions.roots:  # a policy made without a project works in this one
            self.permissions.roots = (self.cwd.resolve(),)


def apply_size_limit(tool: Tool, tool_use_id: str, output: ToolOutput, directory: Path) -> tuple[ToolOutput, str | None]:
    """Persist a text result over the tool's limit and return its preview instead.

    In a block result (an MCP tool's text and images) the text blocks are measured together and
    replaced by one preview block; the other blocks stay.
    """
    limit = tool.max_result_size_chars
    if limit is None:
        return output, None
    if isinstance(output.content, str):
        text, others = output.content, None
    else:
        text = "\n".join(b.text for b in output.content if isinstance(b, TextBlock))
        others = [b for b in output.content if not isinstance(b, TextBlock)]
    if len(text) <= limit or is_persisted_preview(text):
        return output, None
    persisted = persist_text(text, tool_use_id, directory)
    kept = {k: v for k, v in (output.structured or {}).items() if k in tool.kept_when_persisted}
    structured = {**kept, "persistedOutputPath": str(persisted.path), "persistedOutputSize": persisted.size_bytes}
    content: Any = persisted.preview if others is None else [TextBlock(text=persisted.preview), *others]
    return (
        ToolOutput(content=content, is_error=output.is_error, structured=structured, summary=output.summary),
        str(persisted.path),
    )


async def _run_one(
    runtime: ToolRuntime,
    tool_use: ToolUseBlock,
    cancelled: asyncio.Event,
    report: Callable[[ToolProgress | SubagentProgress], None],
) -> ToolCallOutcome:
    tool = runtime.tools.get(tool_use.name)
    if tool is None:
        known = ", ".join(sorted(runtime.tools))
        return ToolCallOutcome(tool_use, ToolOutput.error(f"Error: no tool named {tool_use.name!r}. Available: {known}"))
    parsed = tool.parse_args(tool_use.input)
    if isinstance(parsed, ToolOutput):
        return ToolCallOutcome(tool_use, parsed)

    def on_progress(text: str) -> None:
        report(ToolProgress(tool_use_id=tool_use.id, text=text))

    ctx = ToolContext(
        cwd=runtime.cwd,
        tool_results_dir=runtime.tool_results_dir,
        tool_use_id=tool_use.id,
        cancelled=cancelled,
        on_progress=on_progress,
        on_event=report,
        state=runtime.state,
        ports=runtime.ports,
        redactor=runtime.redactor,
        scrubbed_env=runtime.scrubbed_env,
        files=runtime.files,
        before_change=runtime.before_change,
        sandbox=runtime.sandbox,
    )
    said: list[HookOutcome] = []
    fields = {"tool_name": tool.name, "tool_input": tool_use.input, "tool_use_id": tool_use.id}
    pre = await runtime.hooks.run("PreToolUse", fields, match=tool.name) if runtime.hooks else None
    if pre is not None and pre.runs:
        said.append(pre)
        if pre.permission == "deny" or pre.stop_turn:
            reason = pre.permission_reason or pre.stop_reason or "no reason given"
            text = f"The PreToolUse hook denied this {tool.name} call: {reason}"
            return ToolCallOutcome(tool_use, ToolOutput.error(text, summary=f"denied by a hook: {tool.name}"), hooks=said)
    hook = pre.permission if pre is not None and pre.permission in ("allow", "ask") else None
    hook_reason = pre.permission_reason if pre is not None else ""
    asking = _StopWatch(_notifying(runtime))
    approver = Approver(
        runtime.permissions, asking.ask if asking.callback else None, runtime.mode, runtime.sandbox,
        tool_use.input, tool_use.id,
    )  # fmt: skip
    denied = None
    if not tool.is_read_only:
        try:
            preview = await tool.prepare(parsed, ctx)
        except Exception as exc:  # a tool bug must not kill the turn; the model hears about it
            preview = ToolOutput.error(f"Error: {tool.name} failed unexpectedly: {type(exc).__name__}: {exc}")
        if isinstance(preview, ToolOutput):
            return ToolCallOutcome(tool_use, runtime.redactor.output(preview), hooks=said)
        denied = await approver.approve(tool, parsed, ctx, preview, hook, hook_reason)
    elif (read := tool.permission_request(parsed, ctx)) is not None or hook == "ask":
        request = read or PermissionRequest(tool_name=tool.name, key="")
        denied = await approver.approve_read(request, hook, hook_reason)
    if denied is not None and asking.stopped:
        cancelled.set()  # Esc or Ctrl+C at the question: no, and the turn ends here
        text = REJECTED_AND_INTERRUPTED.format(tool=tool.name)
        denied = ToolOutput.error(text, summary=f"rejected: {tool.name}")
        denied.denied = True
    if denied is not None:
        return ToolCallOutcome(tool_use, denied, hooks=said)
    if approver.updated_input is not None:  # the one who allowed the call changed its input
        parsed = tool.parse_args(approver.updated_input)
        if isinstance(parsed, ToolOutput):
            return ToolCallOutcome(tool_use, parsed, hooks=said)
        fields["tool_input"] = approver.updated_input
    if cancelled.is_set():
        return ToolCallOutcome(tool_use, ToolOutput.error(INTERRUPTED_BY_USER), hooks=said)
    try:
        output = await tool.run(parsed, ctx)
    except Exception as exc:  # a tool bug must not kill the turn; the model hears about it
        output = ToolOutput.error(f"Error: {tool.name} failed unexpectedly: {type(exc).__name__}: {exc}")
    output = runtime.redactor.output(output)
    output, path = apply_size_limit(tool, tool_use.id, output, runtime.tool_results_dir)
    if runtime.hooks is not None and not output.is_error:
        response = output.structured if output.structured is not None else _text_of(output)
        post = await runtime.hooks.run("PostToolUse", {**fields, "tool_response": response}, match=tool.name)
        if post.runs:
            said.append(post)
    return ToolCallOutcome(tool_use, output, path, hooks=said)


def _text_of(output: ToolOutput) -> str:
    if isinstance(output.content, str):
        return output.content
    return "\n".join(b.text for b in output.content if isinstance(b, TextBlock))


class _StopWatch:
    """Passes the user's answers through, noting one that also stopped the turn (`Answer.interrupt`)."""

    def __init__(self, callback: ApprovalCallback | None) -> None:
        self.callback = callback
        self.stopped = False

    async def ask(self, request: PermissionRequest) -> Answer:
        assert self.callback is not None
        answer = as_answer(await self.callback(request))
        self.stopped = self.stopped or answer.interrupt
        return answer


def _notifying(runtime: ToolRuntime) -> ApprovalCallback | None:
    """The approval callback, firing Notification hooks as a prompt is shown (never waiting on them)."""
    ask, notify = runtime.ask, runtime.notify
    if ask is None or notify is None or runtime.hooks is None or not runtime.hooks.matching("Notification"):
        return ask
    pending: set[asyncio.Task[None]] = runtime.hooks.background

    async def asking(request: PermissionRequest) -> Any:
        task = asyncio.create_task(notify(f"agent-repl needs your permission to use {request.tool_name}", "permission_prompt"))
        pending.add(task)
        task.add_done_callback(pending.discard)
        return await ask(request)

    return asking


def batches(tool_uses: list[ToolUseBlock], tools: dict[str, Tool]) -> list[list[ToolUseBlock]]:
    """Consecutive read-only calls share a batch and run together; every other call runs alone."""
    groups: list[list[ToolUseBlock]] = []
    for tool_use in tool_uses:
        tool = tools.get(tool_use.name)
        read_only = tool is not None and tool.is_read_only
        if read_only and groups and all(
            (t := tools.get(u.name)) is not None and t.is_read_only for u in groups[-1]
        ):
            groups[-1].append(tool_use)
        else:
            groups.append([tool_use])
    return groups


async def execute_tool_calls(
    runtime: ToolRuntime, tool_uses: list[ToolUseBlock], cancelled: asyncio.Event
) -> AsyncIterator[ToolProgress | SubagentProgress | ToolCallOutcome]:
    """Yield progress as it happens and each call's outcome as it finishes, in batch order."""
    queue: asyncio.Queue[ToolProgress | SubagentProgress | ToolCallOutcome | None] = asyncio.Queue()

    for batch in batches(tool_uses, runtime.tools):
        if cancelled.is_set():
            for tool_use in batch:
                yield ToolCallOutcome(tool_use, ToolOutput.error(INTERRUPTED_BY_USER))
            continue

        async def run_and_post(tool_use: ToolUseBlock) -> None:
            try:
                outcome = await _run_one(runtime, tool_use, cancelled, queue.put_nowait)
            except Exception as exc:  # every call must post an outcome, or the batch waits forever
                error = f"Error: the {tool_use.name} call failed: {type(exc).__name__}: {exc}"
                outcome = ToolCallOutcome(tool_use, ToolOutput.error(error))
            await queue.put(outcome)

        tasks = [asyncio.create_task(run_and_post(u)) for u in batch]
        remaining = len(batch)
        try:
            while remaining:
                item = await queue.get()
                if isinstance(item, ToolCallOutcome):
                    remaining -= 1
                if item is not None:
                    yield item
        finally:
            for task in tasks:
                if not task.done():
                    task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
