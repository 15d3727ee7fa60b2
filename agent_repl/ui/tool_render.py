"""How a tool call looks, live or resumed, in the app and in the inline REPL: one place for all.

The header, the one-line outcome and the body are chosen here; the diff, checklist and plan
renderers themselves live in `tool_views` (imported when needed: they pull in pydantic).

Everything is derived from what the transcript keeps (the tool's name and input, the result text,
and the structured copy in Claude Code's `toolUseResult` shapes: `structuredPatch` for Edit and
Write, `newTodos` for TodoWrite, `totalToolUseCount` for Task...), so a call looks the same while
it runs, after a resume, and in a session Claude Code wrote. Every string from the model, a tool
or a file passes through `show_controls` before it becomes a `Text`; nothing here parses markup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from agent_repl.core.model.messages import AssistantMessage, Message, ToolUseBlock, UserMessage
from agent_repl.core.model.visible import show_controls

HEADLINE_WIDTH = 90
RESULT_PREVIEW_LINES = 30
# The newest tool calls of a sub-agent a Task block lists.
TASK_STEPS_SHOWN = 12
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write"})
OPEN_BY_DEFAULT = EDIT_TOOLS | {"TodoWrite", "ExitPlanMode"}
# The API's own web tools: their result lists the pages (`tool_views`).
WEB_TOOLS = frozenset({"WebSearch", "WebFetch"})
# The argument a header shows, by tool; the first key present wins.
_MAIN_ARGUMENT = ("command", "file_path", "notebook_path", "pattern", "path", "url", "query", "description")
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


def add_step(call: ToolCall, message: Message) -> ToolCall | None:
    """An entry of a sub-agent's history joins its Task call: a tool call becomes a step, a result
    completes its step. The step it touched, if any."""
    touched = None
    if isinstance(message, AssistantMessage):
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                touched = call.step_ids[block.id] = ToolCall(block.name, dict(block.input))
                call.steps.append(touched)
    elif isinstance(message, UserMessage):
        for result in message.tool_results():
            step = call.step_ids.get(result.tool_use_id)
            if step is not None:
                step.result, step.is_error, step.structured = result.text(), result.is_error, message.tool_use_result
                touched = step
    return touched


def one_line(text: str, width: int = HEADLINE_WIDTH) -> str:
    """`text` on one line, control characters visible, cut to `width` with an ellipsis."""
    line = " ".join(show_controls(text, newlines=True, tabs=True).split())
    return line if len(line) <= width else line[: width - 1] + "…"


def headline(call: ToolCall, width: int = HEADLINE_WIDTH) -> str:
    """`Name(main argument)`, the same for a live call, a resumed one and one Claude Code made."""
    data = call.input
    if call.name == "TodoWrite" and isinstance(data.get("todos"), list):
        count = len(data["todos"])
        return f"TodoWrite({count} item{'s' if count != 1 else ''})"
    main = next((data[key] for key in _MAIN_ARGUMENT if isinstance(data.get(key), str)), None)
    if main is None and data:
        main = ", ".join(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in data.items())
    return one_line(f"{call.name}({main or ''})", width)


def _structured(call: ToolCall) -> dict[str, Any]:
    return call.structured if isinstance(call.structured, dict) else {}


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def outcome(call: ToolCall) -> str:
    """One line on how the call went, for the header and the inline `⎿` line."""
    if call.result is None and call.steps:
        return f"running… {_plural(len(call.steps), 'tool use')} · {headline(call.steps[-1], 60)}"
    if call.result is None:
        return one_line(call.progress or "running…", 100)
    data, info = call.input, _structured(call)
    path = one_line(str(info.get("filePath") or data.get("file_path") or ""), 70)
    if isinstance(call.structured, str) and call.structured.strip():
        return one_line(call.structured.strip().splitlines()[0], 100)  # a one-line result, as written
    if call.is_error:
        first = _TOOL_ERROR.sub("", call.result).strip().splitlines()
        return one_line(first[0] if first else "error", 100)
    if call.name in EDIT_TOOLS:
        from agent_repl.ui.tool_views import diff_summary, edit_hunks

        if call.name == "Write" and info.get("type") != "update":
            content = data.get("content") if isinstance(data.get("content"), str) else info.get("content", "")
            return f"Wrote {_plural(len(str(content).splitlines()), 'line')} to {path}"
        hunks = edit_hunks(call.name, dict(data), call.structured)
        return f"Updated {path}: {diff_summary(hunks)}" if hunks is not None else f"Updated {path}"
    if call.name == "TodoWrite":
        from agent_repl.ui.tool_views import todos_of

        todos = todos_of(dict(data), call.structured) or []
        done = sum(1 for t in todos if t.status == "completed")
        return f"{_plural(len(todos), 'todo')}, {done} done"
    if call.name == "Task" and "totalToolUseCount" in info:
        seconds = (info.get("totalDurationMs") or 0) / 1000
        tokens = info.get("totalTokens") or 0
        return f"Done ({_plural(info['totalToolUseCount'], 'tool use')} · {tokens:,} tokens · {seconds:.1f}s)"
    if call.name == "Read" and isinstance(info.get("file"), dict) and "numLines" in info["file"]:
        return f"Read {_plural(info['file']['numLines'], 'line')}"
    if call.name in ("Grep", "Glob") and "numFiles" in info:
        if info.get("mode") == "content":
            return f"Found {_plural(info.get('numLines', 0), 'line')}"
        return f"Found {_plural(info['numFiles'], 'file')}"
    if info.get("persistedOutputPath"):
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
    return call.name in OPEN_BY_DEFAULT and not call.is_error


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
    if call.name == "Bash" and isinstance(call.input.get("command"), str):
        return show_controls(call.input["command"][:limit])
    return show_controls(json.dumps(dict(call.input), ensure_ascii=False, indent=1)[:limit])


def body(call: ToolCall) -> RenderableType:
    """What a tool call shows when it is open: a diff, a checklist, a plan (`tool_views`), a
    sub-task, or else its input and result."""
    if (call.name in OPEN_BY_DEFAULT or call.name in WEB_TOOLS) and not call.is_error:
        from agent_repl.ui.tool_views import tool_body

        special = tool_body(call.name, dict(call.input), call.structured)
        if special is not None:
            return special
    if call.name == "Task":
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
