"""Headless print mode: `agent-repl -p PROMPT`, one turn, output as text, json or stream-json.

The formats are Claude Code's headless ones, written down in our words in
`agent_repl/print_mode.schema.json` (a test checks every line against it):

- `text`: the final answer only (control characters made visible);
- `json`: one `result` object: subtype, timings, usage and `modelUsage` per model, cost, and the
  tool calls permission refused (`permission_denials`);
- `stream-json`: one object per line: `system`/`init` first, then each `assistant` message (one
  content block each, as the transcript keeps them) and each `user` message carrying a tool result,
  a `system`/`compact_boundary` where the conversation was compacted, the raw `stream_event`s too
  with `--include-partial-messages`, and the `result` last.

A call that no rule allows is denied (there is nobody to ask) and the model hears that. The exit
status is non-zero when the turn did not complete.

A prompt that is a known slash command (`-p "/context"`, `/cost`, `/compact`...) runs as the
command, as Claude Code does: its output is the result (`num_turns` 0, `local_command` naming it),
and a command that needs the model (/compact) makes its own request. A slash word no command
knows goes to the model as a prompt, as Claude Code sends it.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Literal, TextIO

from agent_repl.core.model.events import (
    AgentEvent,
    AssistantMessageEvent,
    ErrorEvent,
    StreamEvent,
    SystemMessageEvent,
    ToolResultEvent,
    ToolUseStarted,
    TurnEnded,
)
from agent_repl.core.model.messages import Usage, new_uuid
from agent_repl.core.model.visible import show_controls
from agent_repl.print_fields import TERMINAL_REASONS, RunFacts, init_line, model_usage, rounded, usage_json
from agent_repl.session import Session

OutputFormat = Literal["text", "json", "stream-json"]

# How a turn ended -> the result's subtype; any other ending is an error during execution.
_SUBTYPES = {"completed": "success", "max_turns": "error_max_turns", "max_budget": "error_max_budget_usd"}


def message_line(
    event: AgentEvent, session_id: str, thinking_display: str | None = None, facts: RunFacts | None = None
) -> dict[str, Any] | None:
    """The stream-json line for one loop event, or None for events Claude Code does not print.
    `thinking_display`: the display the requests asked for, named on a line holding thinking;
    `facts`: the run's (it tells which message and block a stream event belongs to)."""
    common = {"session_id": session_id, "parent_tool_use_id": None}
    if isinstance(event, AssistantMessageEvent):
        m = event.message
        shows_thinking = thinking_display is not None and any(b.type == "thinking" for b in m.content)
        return {
            "type": "assistant",
            **({"thinking_display": thinking_display} if shows_thinking else {}),
            "uuid": m.uuid,
            **common,
            "timestamp": m.timestamp,
            "request_id": m.request_id,
            "message": {
                "id": m.message_id,
                "type": "message",
                "role": "assistant",
                "model": m.model,
                "content": [block.model_dump(mode="json") for block in m.content],
                "stop_reason": m.stop_reason,
                "stop_sequence": None,
                "stop_details": None,
                "usage": usage_json(m.usage or Usage()),
                "context_management": None,
            },
        }
    if isinstance(event, ToolResultEvent):
        result = event.message
        line: dict[str, Any] = {
            "type": "user",
            "uuid": result.uuid,
            **common,
            "timestamp": result.timestamp,
            "message": {"role": "user", "content": [block.model_dump(mode="json") for block in result.blocks()]},
            # Whether permission let the call run (the events do not say which rule or answer did).
            "tool_result_meta": [
                {"id": event.tool_use_id, "permission_decision": {"decision": "reject" if event.denied else "accept"}}
            ],
        }
        if result.tool_use_result is not None:
            line["tool_use_result"] = result.tool_use_result
        return line
    if isinstance(event, StreamEvent):
        line = {"type": "stream_event", "uuid": new_uuid(), **common, "event": event.event}
        if event.ttft_ms is not None:
            line["ttft_ms"] = event.ttft_ms
        if facts is not None:
            line["api_message_id"] = facts.current_message_id
            if thinking_display is not None and facts.thinking_event(event.event):
                line["thinking_display"] = thinking_display
        return line
    if isinstance(event, SystemMessageEvent) and event.message.subtype == "compact_boundary":
        meta = event.message.metadata
        return {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": event.message.uuid,
            "session_id": session_id,
            "compact_metadata": {"trigger": meta.get("trigger", "auto"), "pre_tokens": meta.get("preTokens", 0)},
        }
    return None


def result_object(
    session: Session,
    ended: TurnEnded | None,
    errors: list[str],
    duration_ms: int,
    denials: list[dict[str, Any]] | None = None,
    facts: RunFacts | None = None,
    api_error_status: int | None = None,
) -> dict[str, Any]:
    subtype = _SUBTYPES.get(ended.reason, "error_during_execution") if ended else "error_during_execution"
    facts = facts or RunFacts()
    run = {
        "stop_reason": facts.stop_reason,
        "terminal_reason": TERMINAL_REASONS.get(ended.reason, ended.reason) if ended else "error",
        "api_error_status": api_error_status,
        "safety_stops": facts.refusals,
        "subagent_stats": facts.subagent_stats(),
    }
    turns = ended.num_requests if ended else 0
    if subtype == "success":
        return {**_result(session, subtype, duration_ms, turns, denials, result=ended.final_text if ended else ""), **run}
    fallback = [f"the turn ended: {ended.reason if ended else 'error'}"]
    return {**_result(session, subtype, duration_ms, turns, denials, errors=errors or fallback), **run}


def _result(
    session: Session,
    subtype: str,
    duration_ms: int,
    num_turns: int,
    denials: list[dict[str, Any]] | None,
    *,
    result: str | None = None,
    errors: list[str] | None = None,
    local_command: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "result",
        "subtype": subtype,
        "is_error": subtype != "success",
        "duration_ms": duration_ms,
        "duration_api_ms": round(session.api_duration_ms),
        "num_turns": num_turns,
    }
    if result is not None:
        out["result"] = result
    if errors is not None:
        out["errors"] = errors
    if local_command is not None:
        out["local_command"] = local_command
    out.update(
        {
            "session_id": session.session_id,
            "total_cost_usd": rounded(session.cost_total_usd),
            "usage": usage_json(session.usage_total),
            "modelUsage": model_usage(session, session.usage_by_model, session.cost_by_model),
            "permission_denials": denials or [],
            "uuid": new_uuid(),
            "result_index": 0,
            "queued_turn_count": 0,
        }
    )
    return out


def _usage_since(now: dict[str, Usage], before: dict[str, Usage]) -> dict[str, Usage]:
    """Per model, the usage added since `before` (the counts; the latest serving details)."""
    def less(usage: Usage, earlier: Usage | None) -> Usage:
        if earlier is None:
            return usage
        return Usage(**{k: (v - getattr(earlier, k)) if isinstance(v, int) else v for k, v in usage})

    return {model: less(usage, before.get(model)) for model, usage in now.items()}


def _cost_since(now: dict[str, float | None], before: dict[str, float | None]) -> dict[str, float | None]:
    return {model: None if cost is None else cost - (before.get(model) or 0.0) for model, cost in now.items()}


async def run_print_mode(
    session: Session,
    prompt: str,
    *,
    output_format: OutputFormat = "text",
    max_turns: int | None = None,
    include_partial_messages: bool = False,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    started = time.monotonic()
    streaming = output_format == "stream-json"
    command = None
    if prompt.strip().startswith("/"):  # only a slash command needs the commands (and their imports)
        from agent_repl.print_command import local_command

        command = local_command(prompt, session)
    if command is not None:
        outcome = await command.run(session, prompt)
        if outcome.prompt is None:
            return _print_command(session, outcome, output_format, started, out, err)
        prompt = outcome.prompt  # a command that hands the model a prompt (/init): the turn runs it
    ended: TurnEnded | None = None
    errors: list[str] = []
    api_error_status: int | None = None
    # Notices such as an MCP server that failed to start; text mode says them once, on stderr.
    warnings: list[str] = []
    inputs: dict[str, dict[str, Any]] = {}
    denials: list[dict[str, Any]] = []
    facts = RunFacts()
    usage_before, cost_before = dict(session.usage_by_model), dict(session.cost_by_model)
    session.stream_events = streaming and include_partial_messages
    if streaming:
        print(json.dumps(init_line(session)), file=out, flush=True)
    async for event in session.run_turn(prompt, max_turns=max_turns):
        facts.see(event)
        if isinstance(event, TurnEnded):
            ended = event
        elif isinstance(event, ErrorEvent):
            errors.append(event.message)
            api_error_status = event.api_status or api_error_status
        elif isinstance(event, SystemMessageEvent) and event.message.level == "warning":
            warnings.append(event.message.content)
        elif isinstance(event, ToolUseStarted):
            inputs[event.tool_use_id] = event.input
        elif isinstance(event, ToolResultEvent) and event.denied:
            denials.append(
                {"tool_name": event.name, "tool_use_id": event.tool_use_id, "tool_input": inputs.get(event.tool_use_id, {})}
            )
        line = message_line(event, session.session_id, session.thinking_display, facts) if streaming else None
        if line is not None:
            print(json.dumps(line), file=out, flush=True)
    duration_ms = int((time.monotonic() - started) * 1000)
    result = result_object(session, ended, errors, duration_ms, denials, facts, api_error_status)
    if streaming:
        since = _usage_since(session.usage_by_model, usage_before)
        result["model_usage_since_last_result"] = model_usage(session, since, _cost_since(session.cost_by_model, cost_before))
        if include_partial_messages:
            result["begun_message_ids"] = facts.begun_message_ids
    # Notices go to stderr in every format: stdout stays the answer, or JSON lines only.
    for message in [w for w in warnings if w not in errors] + (errors if output_format == "text" else []):
        print(f"agent-repl: {show_controls(message)}", file=err)
    if output_format == "text":
        # Like Claude Code's print mode: the final answer only, not the narration between tool calls.
        if result["subtype"] == "success":
            print(show_controls(result["result"]), file=out, flush=True)
        if ended and ended.reason == "max_turns":
            print(f"agent-repl: stopped after {ended.num_requests} model requests (--max-turns)", file=err)
    else:
        print(json.dumps(result), file=out, flush=True)
    return 0 if result["subtype"] == "success" else 1


def _print_command(
    session: Session, outcome: Any, output_format: OutputFormat, started: float, out: TextIO, err: TextIO
) -> int:
    """A local command's output in the chosen format (`outcome`: a `print_command.CommandOutcome`)."""
    duration_ms = int((time.monotonic() - started) * 1000)
    subtype = "error_during_execution" if outcome.is_error else "success"
    if outcome.is_error:
        result = _result(session, subtype, duration_ms, 0, [], errors=[outcome.text], local_command=outcome.name)
    else:
        result = _result(session, subtype, duration_ms, 0, [], result=outcome.text, local_command=outcome.name)
    # No turn ran: no reply to have stopped, no loop to have ended (null, as Claude Code says then).
    result.update({"stop_reason": None, "terminal_reason": None, "api_error_status": None})
    if output_format == "text":
        if outcome.is_error:
            print(f"agent-repl: {show_controls(outcome.text)}", file=err)
        elif outcome.text:
            print(show_controls(outcome.text), file=out, flush=True)
        return 1 if outcome.is_error else 0
    if output_format == "stream-json":
        print(json.dumps(init_line(session)), file=out, flush=True)
        for boundary in outcome.boundaries:
            line = message_line(SystemMessageEvent(message=boundary), session.session_id)
            print(json.dumps(line), file=out, flush=True)
        print(json.dumps(command_line(session, outcome)), file=out, flush=True)
    print(json.dumps(result), file=out, flush=True)
    return 1 if outcome.is_error else 0


def command_line(session: Session, outcome: Any) -> dict[str, Any]:
    """The stream-json line carrying a local command's output: a synthetic assistant message (no
    model wrote it, nothing was billed), naming the command that ran."""
    line: dict[str, Any] = {
        "type": "assistant",
        "uuid": new_uuid(),
        "session_id": session.session_id,
        "parent_tool_use_id": None,
        "message": {
            "id": new_uuid(),
            "type": "message",
            "role": "assistant",
            "model": "<synthetic>",
            "content": [{"type": "text", "text": outcome.text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage_json(Usage()),
        },
        "local_command_run": {"command": outcome.name, "args": outcome.args},
    }
    if outcome.context_usage is not None:
        line["context_usage"] = outcome.context_usage
    return line

