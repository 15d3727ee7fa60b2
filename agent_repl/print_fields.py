"""The fields of print mode's lines that describe the run: the init line, usage as the API reports
it, usage per model, and what the result says about how the run went (`RunFacts`, gathered from the
loop's events as they pass).

Fields follow Claude Code's output wherever they have a meaning here; those left out, and why, are
listed in `agent_repl/print_mode.schema.json` (`x-omitted`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_repl import __version__
from agent_repl.core.model.events import (
    AgentEvent,
    AssistantMessageEvent,
    StreamEvent,
    ToolResultEvent,
    ToolUseStarted,
)
from agent_repl.core.model.messages import Usage

if TYPE_CHECKING:
    from agent_repl.session import Session

# How a turn ended -> Claude Code's `terminal_reason` (an interrupted turn was cancelled).
TERMINAL_REASONS = {
    "completed": "completed",
    "max_turns": "max_turns",
    "max_budget": "max_budget_usd",
    "interrupted": "aborted_streaming",
    "error": "error",
    "refusal": "refusal",
    "hook_stopped": "hook_stopped",
}
TASK_TOOL = "Task"


def usage_json(usage: Usage) -> dict[str, Any]:
    """Usage in the API's shape, with the cache writes split by lifetime and the server tools' calls."""
    return {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": usage.ephemeral_5m_input_tokens,
            "ephemeral_1h_input_tokens": usage.ephemeral_1h_input_tokens,
        },
        "server_tool_use": {
            "web_search_requests": usage.web_search_requests,
            "web_fetch_requests": usage.web_fetch_requests,
        },
        "output_tokens_details": {"thinking_tokens": usage.thinking_tokens},
        "service_tier": usage.service_tier,
        "inference_geo": usage.inference_geo,
        "speed": usage.speed,
    }


def rounded(cost: float | None) -> float | None:
    """A cost in USD to six places; null when a model used has no known price."""
    return None if cost is None else round(cost, 6)


def served_by_anthropic(session: Session) -> bool:
    base = session.settings.base_url
    return base is None or base.rstrip("/").endswith("api.anthropic.com")


def model_usage(session: Session, usage_by_model: dict[str, Usage], cost_by_model: dict[str, float | None]) -> dict[str, dict[str, Any]]:
    """Tokens and cost per model, in the result's camelCase `modelUsage` shape."""
    out = {}
    for model, usage in usage_by_model.items():
        info = session.model_catalog.info(model)
        cost = cost_by_model.get(model)
        out[model] = {
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "cacheReadInputTokens": usage.cache_read_input_tokens,
            "cacheCreationInputTokens": usage.cache_creation_input_tokens,
            "cacheCreationEphemeral5mInputTokens": usage.ephemeral_5m_input_tokens,
            "cacheCreationEphemeral1hInputTokens": usage.ephemeral_1h_input_tokens,
            "thinkingTokens": usage.thinking_tokens,
            "webSearchRequests": usage.web_search_requests,
            "costUSD": rounded(cost),
            # Our prices are the list prices of agent_repl.core.api.pricing; none known: null.
            "costBasis": "list" if cost is not None else None,
            "contextWindow": session.settings.context_window or info.context_window,
            "maxOutputTokens": info.max_output_tokens,
            "canonicalModel": model,
            "provider": "firstParty" if served_by_anthropic(session) else "gateway",
        }
    return out


def init_line(session: Session) -> dict[str, Any]:
    from agent_repl.commands import default_registry
    from agent_repl.commands.project import memory_files
    from agent_repl.print_command import INTERACTIVE_ONLY
    from agent_repl.tools.skill import SKILL_TOOL_NAME, Skill

    runner = getattr(session.tool_ports, "subagents", None)
    agents = sorted(runner.catalog.definitions) if runner is not None else []
    skill_tool = session.tools.get(SKILL_TOOL_NAME)
    skills = [skill.name for skill in skill_tool.catalog.sorted()] if isinstance(skill_tool, Skill) else []
    return {
        "type": "system",
        "subtype": "init",
        "uuid": _uuid(),
        "session_id": session.session_id,
        "cwd": str(session.cwd),
        "original_cwd": str(session.cwd),
        "additional_directories": [str(d) for d in session.settings.add_dirs],
        "model": session.model,
        "tools": sorted(session.tools),
        "mcp_servers": [
            {"name": server.name, "status": server.status}
            for server in (session.mcp.status() if session.mcp is not None else [])
        ],
        "permissionMode": session.permission_mode_name,
        "slash_commands": [name.lstrip("/") for name in default_registry().complete("", session)],
        "terminal_slash_commands": sorted(INTERACTIVE_ONLY),
        "agents": agents,
        "skills": skills,
        "apiKeySource": "ANTHROPIC_API_KEY" if session.settings.api_key else "none",
        "output_style": "default",
        "memory_paths": {"project": [str(path) for path in memory_files(session.cwd)]},
        "sandbox_enabled": session.sandbox.active,
        "served_by_anthropic": served_by_anthropic(session),
        "analytics_disabled": True,  # agent-repl sends no analytics at all
        # Optional control-protocol features on top of the base protocol: none yet.
        "capabilities": [],
        "agent_repl_version": __version__,
    }


def _uuid() -> str:
    from agent_repl.core.model.messages import new_uuid

    return new_uuid()


@dataclass
class RunFacts:
    """What the result says about the run, gathered from the events as they pass."""

    stop_reason: str | None = None
    refusals: int = 0
    # The sub-agents the run started (Task calls), how they ended, and their types.
    task_calls: dict[str, str] = field(default_factory=dict)
    tasks_completed: int = 0
    tasks_failed: int = 0
    # With partial messages: the ids of the API messages whose stream began.
    begun_message_ids: list[str] = field(default_factory=list)
    # The message a stream event belongs to, and its content blocks' types by index.
    current_message_id: str | None = None
    block_types: dict[int, str] = field(default_factory=dict)

    def see(self, event: AgentEvent) -> None:
        if isinstance(event, AssistantMessageEvent) and not event.message.is_synthetic:
            self.stop_reason = event.message.stop_reason or self.stop_reason
            if event.message.stop_reason == "refusal" and event.message.content:
                self.refusals += 1
        elif isinstance(event, ToolUseStarted) and event.name == TASK_TOOL:
            self.task_calls[event.tool_use_id] = str(event.input.get("subagent_type") or "general-purpose")
        elif isinstance(event, ToolResultEvent) and event.tool_use_id in self.task_calls and not event.denied:
            if event.is_error:
                self.tasks_failed += 1
            else:
                self.tasks_completed += 1
        elif isinstance(event, StreamEvent):
            self._see_stream(event.event)

    def _see_stream(self, raw: dict[str, Any]) -> None:
        kind = raw.get("type")
        if kind == "message_start":
            self.current_message_id = (raw.get("message") or {}).get("id")
            self.block_types = {}
            if self.current_message_id:
                self.begun_message_ids.append(self.current_message_id)
        elif kind == "content_block_start":
            self.block_types[int(raw.get("index", 0))] = str((raw.get("content_block") or {}).get("type"))

    def thinking_event(self, raw: dict[str, Any]) -> bool:
        """Whether a stream event starts a message or belongs to a thinking block."""
        if raw.get("type") == "message_start":
            return True
        return raw.get("type") in ("content_block_start", "content_block_delta") and self.block_types.get(
            int(raw.get("index", -1))
        ) in ("thinking", "redacted_thinking")

    def subagent_stats(self) -> dict[str, Any]:
        """Claude Code's counters for sub-agents; agent-repl runs them in the foreground, one level deep."""
        spawned = self.tasks_completed + self.tasks_failed
        by_type: dict[str, int] = {}
        for kind in self.task_calls.values():
            by_type[kind] = by_type.get(kind, 0) + 1
        return {
            "spawned": spawned,
            "requested": {"background": 0, "foreground": len(self.task_calls), "unset": 0},
            "started_in_background": 0,
            "max_depth": 1 if spawned else 0,
            "spawned_by_subagents": 0,
            "completed": self.tasks_completed,
            "failed": self.tasks_failed,
            "killed": {"parent": 0, "user": 0, "system": 0},
            "refused": {"depth_limit": 0, "concurrency_limit": 0, "budget": 0},
            "by_type": by_type,
        }
