"""Turning a policy's reply into the response the API would send.

Drops thinking when the request has it off, returns the short text written between tool calls
as thinking on models that do so, stops at a stop sequence, truncates at `max_tokens` (or at the
context window; a tool call cut there keeps only the part of its input JSON that was written),
signs thinking blocks bound to their prefix and applies `display: "omitted"` (and the beta
`"updates"`: only the notes between tool calls keep their text). With
`thinking: {"type": "between_tools"}` the model writes no up-front thinking and its notes between
tool calls come back with their text (that mode has no `display`). Output tokens count thinking at
its full length even when omitted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import jiter

from agent_repl.emulator.blocks import Block
from agent_repl.emulator.models import ModelSpec
from agent_repl.emulator.policies.base import Reply
from agent_repl.emulator.signatures import thinking_signature
from agent_repl.emulator.thinking_binding import BindingState, PrefixChain
from agent_repl.emulator.tokens import TokenCounter

_THINKING_ON = ("enabled", "adaptive")


@dataclass(frozen=True)
class Shaped:
    content: list[Block]
    stop_reason: str
    stop_sequence: str | None
    output_tokens: int
    thinking_tokens: int
    stop_details: dict[str, Any] | None = None


def thinking_mode(body: dict[str, Any], spec: ModelSpec) -> tuple[bool, str]:
    """(whether the model thinks, the display: "summarized" or "omitted")."""
    config = body.get("thinking")
    if not isinstance(config, dict):
        return spec.thinking_default_on, spec.thinking_display_default
    enabled = config.get("type") in _THINKING_ON
    if config.get("type") == "between_tools":
        return enabled, "summarized"
    display = config.get("display")
    return enabled, display if display in ("summarized", "omitted", "updates") else spec.thinking_display_default


def writes_progress_as_thinking(body: dict[str, Any], spec: ModelSpec) -> bool:
    """Whether text between tool calls comes back as thinking (also with `between_tools`)."""
    config = body.get("thinking")
    kind = config.get("type") if isinstance(config, dict) else None
    return spec.progress_as_thinking and (thinking_mode(body, spec)[0] or kind == "between_tools")


# Marks a progress note while the reply is shaped (display "updates" keeps only their text).
_NOTE = "_progress_note"


def _progress_as_thinking(content: list[Block]) -> list[Block]:
    last_tool = max((i for i, b in enumerate(content) if b.get("type") == "tool_use"), default=-1)
    return [
        {"type": "thinking", "thinking": b["text"], "signature": "", _NOTE: True}
        if b.get("type") == "text" and i < last_tool and str(b.get("text", "")).strip()
        else b
        for i, b in enumerate(content)
    ]


def _cut_at_stop_sequence(content: list[Block], sequences: list[str]) -> tuple[list[Block], str | None]:
    for index, block in enumerate(content):
        if block.get("type") != "text":
            continue
        text = str(block.get("text", ""))
        hits = [(text.find(s), s) for s in sequences if s and s in text]
        if hits:
            at, sequence = min(hits)
            kept = content[:index] + ([{**block, "text": text[:at]}] if text[:at] else [])
            return kept, sequence
    return content, None


def _truncate(content: list[Block], budget: int, counter: TokenCounter) -> tuple[list[Block], bool]:
    kept: list[Block] = []
    used = 0
    for block in content:
        cost = counter.count_block(block)
        if used + cost <= budget:
            kept.append(block)
            used += cost
            continue
        room = budget - used
        field = {"text": "text", "thinking": "thinking"}.get(str(block.get("type")))
        if field and room > 0:
            cut = counter.truncate_text(str(block.get(field, "")), room)
            if cut:
                kept.append({**block, field: cut})
        elif block.get("type") == "tool_use" and room > 0:
            kept.append(_cut_tool_use(block, room, counter))
        return kept, True
    return kept, False


def _cut_tool_use(block: Block, room: int, counter: TokenCounter) -> Block:
    """A tool call cut inside its input: what a client parses from the JSON written so far."""
    written = counter.truncate_text(json.dumps(block.get("input", {}), ensure_ascii=False), room)
    partial = jiter.from_json(written.encode(), partial_mode=True) if written.strip() else {}
    return {**block, "input": partial if isinstance(partial, dict) else {}}


def shape_reply(
    reply: Reply,
    *,
    body: dict[str, Any],
    spec: ModelSpec,
    counter: TokenCounter,
    room_in_window: int,
    binding: BindingState | None = None,
) -> Shaped:
    thinks, display = thinking_mode(body, spec)
    content = [
        dict(b) for b in reply.content if thinks or b.get("type") not in ("thinking", "redacted_thinking")
    ]
    if writes_progress_as_thinking(body, spec):
        content = _progress_as_thinking(content)
    stop_reason = reply.stop_reason
    sequences = [s for s in body.get("stop_sequences") or [] if isinstance(s, str)]
    content, matched = _cut_at_stop_sequence(content, sequences)
    if matched is not None:
        stop_reason = "stop_sequence"
    max_tokens = int(body.get("max_tokens", spec.max_output_tokens))
    budget = min(max_tokens, max(0, room_in_window))
    content, truncated = _truncate(content, budget, counter)
    if truncated:
        stop_reason, matched = (
            ("max_tokens" if budget == max_tokens else "model_context_window_exceeded"),
            None,
        )
    output_tokens = thinking_tokens = 0
    shaped: list[Block] = []
    chain = binding.chain.copy() if binding is not None else PrefixChain()
    for block in content:
        cost = counter.count_block(block)
        output_tokens += cost
        if block.get("type") == "thinking":
            thinking_tokens += cost
            text = str(block.get("thinking", ""))
            bound = binding.binding(chain) if binding is not None else None
            note = bool(block.pop(_NOTE, False))
            block = {**block, "signature": thinking_signature(spec.id, text, cost, bound)}
            if display == "omitted" or (display == "updates" and not note):
                block["thinking"] = ""
        chain.extend("assistant", block)
        shaped.append(block)
    details = reply.stop_details if stop_reason == "refusal" else None
    return Shaped(shaped, stop_reason, matched, output_tokens, thinking_tokens, details)
