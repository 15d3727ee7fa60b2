"""Headless print mode: `agent-repl -p PROMPT`, one turn, output as text, json or stream-json.

Like Claude Code's print mode: `json` prints one result object, `stream-json` one JSON object per
event and the result object last. A Bash call that no rule allows is denied (there is nobody to
ask), and so is an edit unless `--permission-mode acceptEdits` lets edits inside the project run;
the model hears that. The exit status is non-zero when the turn did not complete.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Literal, TextIO

from agent_repl.core.events import ErrorEvent, SystemMessageEvent, TurnEnded
from agent_repl.core.session import Session
from agent_repl.core.visible import show_controls

OutputFormat = Literal["text", "json", "stream-json"]

_SUBTYPES = {
    "completed": "success",
    "max_turns": "error_max_turns",
    "interrupted": "error_during_execution",
    "error": "error_during_execution",
    "refusal": "error_during_execution",
}


def result_object(session: Session, ended: TurnEnded | None, errors: list[str], duration_ms: int) -> dict:
    reason = ended.reason if ended else "error"
    subtype = _SUBTYPES[reason]
    usage = session.usage_total
    result_text = ended.final_text if ended and reason == "completed" else ("\n".join(errors) or (ended.final_text if ended else ""))
    return {
        "type": "result",
        "subtype": subtype,
        "is_error": subtype != "success",
        "result": result_text,
        "session_id": session.session_id,
        "num_turns": ended.num_requests if ended else 0,
        "duration_ms": duration_ms,
        "usage": {
            "input_tokens": usage.input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "output_tokens": usage.output_tokens,
        },
        "total_cost_usd": round(session.cost_total_usd, 6),
        "model": session.model,
    }


async def run_print_mode(
    session: Session,
    prompt: str,
    *,
    output_format: OutputFormat = "text",
    max_turns: int | None = None,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    started = time.monotonic()
    ended: TurnEnded | None = None
    errors: list[str] = []
    # Notices such as an MCP server that failed to start; text mode says them once, on stderr.
    warnings: list[str] = []
    if output_format == "stream-json":
        init = {
            "type": "system",
            "subtype": "init",
            "session_id": session.session_id,
            "model": session.model,
            "cwd": str(session.cwd),
            "tools": sorted(session.tools),
            "permissionMode": session.permission_mode.value,
            "mcp_servers": [
                {"name": server.name, "status": server.status}
                for server in (session.mcp.status() if session.mcp is not None else [])
            ],
        }
        print(json.dumps(init), file=out, flush=True)
    async for event in session.run_turn(prompt, max_turns=max_turns):
        if isinstance(event, TurnEnded):
            ended = event
        elif isinstance(event, ErrorEvent):
            errors.append(event.message)
        elif isinstance(event, SystemMessageEvent) and event.message.level == "warning":
            warnings.append(event.message.content)
        if output_format == "stream-json":
            print(event.model_dump_json(), file=out, flush=True)
    result = result_object(session, ended, errors, int((time.monotonic() - started) * 1000))
    if output_format == "text":
        # Like Claude Code's print mode: the final answer only, not the narration between tool calls.
        if result["subtype"] == "success":
            print(result["result"], file=out, flush=True)
        for message in [w for w in warnings if w not in errors] + errors:
            print(f"agent-repl: {show_controls(message)}", file=err)
        if ended and ended.reason == "max_turns":
            print(f"agent-repl: stopped after {ended.num_requests} model requests (--max-turns)", file=err)
    else:
        print(json.dumps(result), file=out, flush=True)
    return 0 if result["subtype"] == "success" else 1
