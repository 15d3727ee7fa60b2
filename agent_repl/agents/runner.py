"""Running a Task call: a sub-agent with its own history, pipeline and compaction (docs/architecture.md 7.3).

The sub-agent is a `Session` of its own that runs the same query loop. What it shares with its
parent is what the user owns: the client, the settings, the permission rules and the way the
user is asked (one question at a time, however many sub-agents run), the permission mode, the
file checkpoints. What it never shares is context state: its pipeline state is its own and marks
it as not the main thread (no cached microcompact, so nothing of it enters the parent's registry
or its cache edits), its compactor and circuit breaker are its own, it keeps no session memory,
and its history goes to its own sidechain transcript, `<session>/subagents/agent-<id>.jsonl`,
with a `agent-<id>.meta.json` naming the Task call (Claude Code's layout). The parent's view
gets only the final answer, as the Task call's result.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_repl.agents.definitions import (
    READ_ONLY_TOOLS,
    AgentCatalog,
    AgentDefinition,
    catalog_listing,
    tool_names_for,
)
from agent_repl.context.pipeline import attach
from agent_repl.context.projector import Pipeline
from agent_repl.core.api.models import add_cost, resolve_model
from agent_repl.core.api.system_prompt import environment_section
from agent_repl.core.config.settings import Settings
from agent_repl.core.model.events import (
    AssistantMessageEvent,
    ErrorEvent,
    SubagentProgress,
    ToolResultEvent,
    TurnEnded,
    UsageEvent,
)
from agent_repl.core.model.messages import ToolUseBlock, Usage
from agent_repl.core.tooling.file_state import ReadLedger
from agent_repl.core.tooling.persisted_output import ensure_private_dir
from agent_repl.core.tooling.tool import TaskRequest, Tool, ToolContext, ToolOutput
from agent_repl.session import Session
from agent_repl.tools.task import Task
from agent_repl.transcript.convert import usage_to_json
from agent_repl.transcript.paths import SessionPaths, write_private_text
from agent_repl.transcript.writer import TranscriptWriter

INTERRUPTED = "[Request interrupted by user: the sub-agent was stopped before it finished]"

PipelineFactory = Callable[[Settings, list[Tool]], Pipeline]


def default_tools(settings: Settings) -> tuple[str, ...]:
    return tuple(settings.subagent_tools) if settings.subagent_tools is not None else READ_ONLY_TOOLS


def task_tool(catalog: AgentCatalog, settings: Settings, tools: list[Tool]) -> Task:
    """The Task tool, its description listing the agent types with the tools each would get here."""
    return Task(catalog_listing(catalog, [tool.name for tool in tools], default_tools(settings)))


class _Checkpoints:
    """The parent's file checkpoints as a sub-agent sees them: its changes are kept for the
    parent's prompt (so /rewind undoes them); it never starts a prompt of its own."""

    def __init__(self, parent: Any) -> None:
        self.before_change = parent.before_change

    async def start_prompt(self, prompt_uuid: str) -> None:
        return None


def usage_total(usage: Usage) -> int:
    """What one request held, in and out (Claude Code's `totalTokens` of a Task result)."""
    return usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens + usage.output_tokens


class SubagentRunner:
    """Starts the sub-agents of one session; the Task tool finds it among the session's tool ports."""

    def __init__(
        self,
        parent: Session,
        catalog: AgentCatalog,
        make_pipeline: PipelineFactory,
        paths: SessionPaths,
        *,
        git_branch: str = "",
    ) -> None:
        self.parent = parent
        self.catalog = catalog
        self.make_pipeline = make_pipeline
        self.paths = paths
        self.git_branch = git_branch
        self.default_tools = default_tools(parent.settings)

    def install(self) -> None:
        self.parent.tool_ports.subagents = self

    def tools_for(self, definition: AgentDefinition) -> list[Tool]:
        names = tool_names_for(definition, list(self.parent.tools), default=self.default_tools)
        return [self.parent.tools[name] for name in names]

    async def _child(self, definition: AgentDefinition, agent_id: str) -> Session:
        parent = self.parent
        settings = parent.settings
        if definition.model is not None:
            settings = settings.model_copy(update={"model": await resolve_model(parent.client, definition.model)})
        tools = self.tools_for(definition)
        pipeline = self.make_pipeline(settings, tools)
        pipeline.state.config.main_thread = False
        pipeline.state.clock = parent.clock
        sink = TranscriptWriter(self.paths, git_branch=self.git_branch, redactor=parent.redactor, agent_id=agent_id)
        child = Session(
            session_id=parent.session_id,
            cwd=parent.cwd,
            settings=settings,
            client=parent.client,
            tools=tools,
            projector=pipeline,
            sink=sink,
            tool_results_dir=parent.tool_results_dir,
            # The parent's policy: the same rules, and one question at a time however many sub-agents ask.
            ask=parent.ask,
            permissions=parent.permissions,
            clock=parent.clock,
            system_prompt=f"{definition.prompt}\n\n{environment_section(parent.cwd)}",
            model_catalog=parent.model_catalog,
        )
        child.capabilities_checked = True
        child.mode = parent.mode
        # Its stop runs SubagentStop hooks (not Stop); the parent's runner keeps /hooks' last results.
        child.agent_id = agent_id
        child.hooks = parent.hooks
        child.start_source = None
        # Its background commands are the session's: /bashes lists them, the session's end kills them.
        child.shells = parent.shells
        child.tool_ports.shells = parent.shells
        child.files = ReadLedger(seen=dict(parent.files.seen))
        if parent.file_history is not None:
            child.file_history = _Checkpoints(parent.file_history)
        attach(child, pipeline)
        return child

    def _write_meta(self, agent_id: str, definition: AgentDefinition, args: TaskRequest, tool_use_id: str) -> None:
        """Claude Code's sidecar: which Task call started this sub-agent (claude-code-log links by it)."""
        directory = ensure_private_dir(self.paths.subagents_dir)
        meta = {"agentType": definition.name, "description": args.description, "toolUseId": tool_use_id}
        path: Path = directory / f"agent-{agent_id}.meta.json"
        write_private_text(path, json.dumps(meta) + "\n")

    async def run_task(self, args: TaskRequest, ctx: ToolContext) -> ToolOutput:
        definition = self.catalog.get(args.subagent_type)
        if definition is None:
            known = ", ".join(sorted(self.catalog.definitions))
            return ToolOutput.error(f"Error: no agent type {args.subagent_type!r}. Available: {known}")
        agent_id = secrets.token_hex(8)
        try:
            child = await self._child(definition, agent_id)
            self._write_meta(agent_id, definition, args, ctx.tool_use_id)
        except Exception as exc:  # an unknown model, an unwritable directory: the model hears it, the session goes on
            return ToolOutput.error(f"Error: the {definition.name} agent could not start: {exc}")
        started = time.monotonic()
        watcher = asyncio.create_task(self._stop_when(ctx.cancelled, child))
        try:
            return await self._run(child, agent_id, args, ctx, started)
        finally:
            watcher.cancel()
            self.parent.usage_total = self.parent.usage_total + child.usage_total
            self.parent.cost_total_usd = add_cost(self.parent.cost_total_usd, child.cost_total_usd)
            await child.sink.close()

    @staticmethod
    async def _stop_when(cancelled: asyncio.Event, child: Session) -> None:
        await cancelled.wait()
        child.interrupt()

    async def _run(self, child: Session, agent_id: str, args: TaskRequest, ctx: ToolContext, started: float) -> ToolOutput:
        ended: TurnEnded | None = None
        errors: list[str] = []
        tool_uses = 0
        last_usage = Usage()

        def report(message: Any) -> None:
            if ctx.on_event is not None:
                ctx.on_event(SubagentProgress(tool_use_id=ctx.tool_use_id, agent_id=agent_id, message=message))

        async for event in child.run_turn(args.prompt):
            if isinstance(event, AssistantMessageEvent) and any(isinstance(b, ToolUseBlock) for b in event.message.content):
                tool_uses += 1
                report(event.message)
            elif isinstance(event, ToolResultEvent):
                report(event.message)
            elif isinstance(event, UsageEvent):
                last_usage = event.usage
            elif isinstance(event, ErrorEvent):
                errors.append(event.message)
            elif isinstance(event, TurnEnded):
                ended = event
        reason = ended.reason if ended is not None else "error"
        if reason == "interrupted":
            return ToolOutput.error(INTERRUPTED, summary="interrupted")
        if reason != "completed":
            why = "; ".join(errors) or f"it stopped ({reason})"
            return ToolOutput.error(f"Error: the sub-agent did not finish: {why}")
        answer = (ended.final_text if ended else "").strip() or "(the sub-agent finished without a written answer)"
        structured = {
            "agentId": agent_id,
            "prompt": args.prompt,
            "content": [{"type": "text", "text": answer}],
            "status": "completed",
            "totalDurationMs": int((time.monotonic() - started) * 1000),
            "totalTokens": usage_total(last_usage),
            "totalToolUseCount": tool_uses,
            "usage": usage_to_json(last_usage),
        }
        summary = f"Done ({tool_uses} tool use{'' if tool_uses == 1 else 's'})"
        return ToolOutput(content=answer, structured=structured, summary=summary)
