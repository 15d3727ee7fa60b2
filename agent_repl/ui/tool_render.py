"""How a tool call looks, live or resumed, in the app and in the inline REPL: one place for all.

The header, the one-line outcome and the body are drawn here from what the tool declares of its
display (`agent_repl.core.tooling.display`: headline, result summary, body kind), looked up by
name in the `ToolDisplays` the front end was given; the diff, checklist and plan renderers
themselves live in `tool_views` (imported when needed: they pull in pydantic).

Everything is derived from what the transcript keeps (the tool's name and input, the result text,
and the structured copy in Claude Code's `toolUseResult` shapes), so a call looks the same while
it runs, after a resume, and in a session Claude Code wrote. Every string from the model, a tool
or a file passes through `show_controls` before it becomes a `Text`; nothing here parses markup.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from agent_repl.core.model.messages import AssistantMessage, Message, ToolUseBlock, UserMessage
from agent_repl.core.model.visible import show_controls
from agent_repl.core.tooling.display import (
    HEADLINE_WIDTH,
    BodyKind,
    ToolDisplay,
    ToolDisplays,
    one_line,
    plural,
)

__all__ = ["HEADLINE_WIDTH", "ToolCall", "add_step", "body", "header", "headline", "one_line", "outcome"]

RESULT_PREVIEW_LINES = 30
# The newest tool calls of a sub-agent a Task block lists.
TASK_STEPS_SHOWN = 12
# Bodies drawn by `tool_views` (the rest: the input and the result, or a sub-task's box).
_DRAWN_BODIES = frozenset({BodyKind.DIFF, BodyKind.CHECKLIST, BodyKind.PLAN, BodyKind.SEARCH_RESULTS, BodyKind.PAGE})
_TOOL_ERROR = re.compile(r"</?tool_use_error>")
# Colour codes (SGR) become styles; synchronized-update brackets only mark redraws and are dropped.
_SGR = re.compile(r"(\x1b\[[0-9;:]*m)")
_SYNC_UPDATE = re.compile(r"\x1b\[\?2026[hl]")


@dataclass
class ToolCall:
    """One tool call as far as it has got: the call, then its result when there is one."""

    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    result: str | None = None
    is_error: bool = False
    # Claude Code's `toolUseResult` (a dict in its shapes, or a string), when the transcript has one.
    structured: Any = None
    progress: str = ""
    # A Task call's sub-agent: its own tool calls, as far as they have got (`add_step`).
    steps: list[ToolCall] = field(default_factory=list)
    step_ids: dict[str, ToolCall] = field(default_factory=dict, repr=False)
    # Where the call's display is looked up (and its sub-agent's steps' displays).
    displays: ToolDisplays = field(default_factory=ToolDisplays, repr=False)

    @property
    def display(self) -> ToolDisplay:
        return self.displays.of(self.name)


def add_step(call: ToolCall, message: Message) -> ToolCall | None:
    """An entry of a sub-agent's history joins its Task call: a tool call becomes a step, a result
    completes its step. The step it touched, if any."""
    touched = None
    if isinstance(message, AssistantMessage):
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                touched = call.step_ids[block.id] = ToolCall(block.name, dict(block.input), displays=call.displays)
                call.steps.append(touched)
    elif isinstance(message, UserMessage):
        for result in message.tool_results():
            step = call.step_ids.get(result.tool_use_id)
            if step is not None:
                step.result, step.is_error, step.structured = result.text(), result.is_error, message.tool_use_result
                touched = step
    return touched


def headline(call: ToolCall, width: int = HEADLINE_WIDTH) -> str:
    """`Name(main argument)` as the tool declares it, the same for a live call, a resumed one and
    one Claude Code made."""
    return call.display.headline(call.name, call.input, width)


def outcome(call: ToolCall) -> str:
    """One line on how the call went, for the header and the inline `⎿` line."""
    if call.result is None and call.steps:
        return f"running… {plural(len(call.steps), 'tool use')} · {headline(call.steps[-1], 60)}"
    if call.result is None:
        return one_line(call.progress or "running…", 100)
    if isinstance(call.structured, str) and call.structured.strip():
        return one_line(call.structured.strip().splitlines()[0], 100)  # a one-line result, as written
    if call.is_error:
        first = _TOOL_ERROR.sub("", call.result).strip().splitlines()
        return one_line(first[0] if first else "error", 100)
    summary = call.display.summary(call.input, call.structured)
    if summary is not None:
        return summary
    if isinstance(call.structured, dict) and call.structured.get("persistedOutputPath"):
        return "output too large for the context"
    first = call.result.strip().splitlines()
    return one_line(first[0] if first else "(no output)", 100)


def header(call: ToolCall, *, width: int = HEADLINE_WIDTH) -> Text:
    """`● Name(argument) outcome`: the title line of a tool call, as a `Text` (never markup)."""
    if call.result is None:
        marker, style = "yellow", "dim"
    elif call.is_error:
        marker, style = "red", "red"
    else:
        marker, style = "green", "dim"
    text = Text()
    text.append("● ", style=marker)
    text.append(headline(call, width), style="bold")
    text.append(" ")
    text.append(outcome(call), style=style)
    return text


def opens_expanded(call: ToolCall) -> bool:
    """Calls whose body is the point (a diff, a checklist, a plan) are shown open, as Claude Code does."""
    return call.display.opens_expanded and not call.is_error


def terminal_output(text: str) -> Text:
    """A program's terminal output (a Claude Code command's stdout): its colours kept as styles,
    every other control or escape sequence shown, never sent to the terminal."""
    parts = _SGR.split(_SYNC_UPDATE.sub("", text))
    safe = "".join(part if index % 2 else show_controls(part) for index, part in enumerate(parts))
    return Text.from_ansi(safe)


def preview(text: str, limit: int = RESULT_PREVIEW_LINES) -> str:
    lines = text.splitlines()
    if len(lines) <= limit:
        return show_controls(text)
    return show_controls("\n".join(lines[:limit])) + f"\n… {len(lines) - limit} more lines"


def input_text(call: ToolCall, limit: int = 2_000) -> str:
    return show_controls(call.display.input_text(call.input, limit))


def body(call: ToolCall) -> RenderableType:
    """What a tool call shows when it is open: a diff, a checklist, a plan (`tool_views`), a
    sub-task, or else its input and result."""
    kind = call.display.body
    if kind in _DRAWN_BODIES and not call.is_error:
        from agent_repl.ui.tool_views import tool_body

        special = tool_body(call.display, dict(call.input), call.structured)
        if special is not None:
            return special
    if kind is BodyKind.SUBTASK:
        return _task_block(call)
    parts: list[RenderableType] = [Text(input_text(call), style="dim")]
    if call.result is None:
        parts.append(Text(one_line(call.progress or "running…", 200), style="dim italic"))
    else:
        parts.append(Text(preview(call.result), style="red" if call.is_error else ""))
    return Group(*parts)


def _task_block(call: ToolCall) -> RenderableType:
    """A sub-task as a box: its instructions (dimmed, cut short) and what it reported back."""
    data = call.input
    title = one_line(f"{data.get('subagent_type') or 'sub-task'}: {data.get('description') or ''}", 80)
    prompt = str(data.get("prompt") or "")
    inner = Text(preview(prompt, 6), style="dim")
    shown = call.steps[-TASK_STEPS_SHOWN:]
    if len(call.steps) > len(shown):
        inner.append(f"\n\n… {len(call.steps) - len(shown)} earlier tool uses", style="dim")
    elif shown:
        inner.append("\n")
    for step in shown:
        inner.append("\n")
        inner.append_text(header(step, width=70))
    if call.result is not None:
        inner.append("\n\n")
        inner.append(preview(call.result), style="red" if call.is_error else "")
    return Panel(inner, title=Text(title), title_align="left", border_style="magenta", expand=True)
