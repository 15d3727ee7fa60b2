"""Rich renderables for command results, shared by the Textual app and the inline REPL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rich.console import Group, JustifyMethod, RenderableType
from rich.table import Table
from rich.text import Text

from agent_repl.commands.results import (
    AgentsReport,
    ClipboardExport,
    CommandResult,
    CompactDone,
    ConfigReport,
    ContextView,
    CostReport,
    DoctorReport,
    EditorRequest,
    ExitRequest,
    HelpReport,
    McpReport,
    MemoryChoices,
    ModelReport,
    PermissionsReport,
    PromptRequest,
    ResumeChoices,
    RewindChoices,
    RewindDone,
    RewindOptions,
    SessionSwitched,
    SnipChoices,
    SnipDone,
    StatusReport,
    TextOutput,
)
from agent_repl.context.ids import ID_LENGTH
from agent_repl.context.snip import SnippableMessage
from agent_repl.core.api.models import cost_text
from agent_repl.core.model.visible import show_controls
from agent_repl.core.tooling.persisted_output import format_size
from agent_repl.ui.tool_render import one_line

LEVEL_STYLE = {"info": "", "warning": "yellow", "error": "bold red"}
CATEGORY_STYLE = {
    "System prompt": "#8a8a8a",
    "Tools": "#6c9ef8",
    "Memory and context": "#c678dd",
    "Messages": "#e5c07b",
    "Tool results": "#56b6c2",
    "Persisted previews": "#98c379",
    "Autocompact buffer": "#e06c75",
    "Free space": "#3e4451",
}
GRID_COLUMNS = 20
GRID_ROWS = 10


def render_result(result: CommandResult, *, now: datetime | None = None) -> RenderableType:
    if isinstance(result, TextOutput):
        return Text(show_controls(result.text), style=LEVEL_STYLE[result.level])
    if isinstance(result, HelpReport):
        return render_help(result)
    if isinstance(result, CostReport):
        return render_cost(result)
    if isinstance(result, ModelReport):
        if result.previous is None:
            return Text(
                f"model: {result.model} (context window {result.context_window:,} tokens); /model NAME to change"
            )
        return Text(
            f"model: {result.previous} → {result.model} (context window {result.context_window:,} tokens)"
        )
    if isinstance(result, SessionSwitched):
        verb = "resumed session" if result.resumed else "new session"
        text = Text(f"{verb} {result.session_id[:8]} ({result.messages} messages)", style="bold")
        if result.previous_path:
            text.append(
                f"\nthe previous one ({result.previous_id[:8]}) stays resumable: {result.previous_path}",
                style="dim",
            )
        for warning in result.warnings:
            text.append(f"\nwarning: {show_controls(warning)}", style="yellow")
        return text
    if isinstance(result, ContextView):
        return render_context(result.report)
    if isinstance(result, ResumeChoices):
        return render_sessions(result, now=now)
    if isinstance(result, SnipChoices):
        return render_snippable(result.items)
    if isinstance(result, SnipDone):
        return Text(result.text)
    if isinstance(result, CompactDone):
        return Text(
            f"compacted: ~{result.tokens_before:,} → ~{result.tokens_after:,} tokens in the model's view; "
            "the summary is under the divider (Enter on it to expand), /uncompact takes it back"
        )
    if isinstance(result, AgentsReport):
        return _agents(result)
    if isinstance(result, McpReport):
        from agent_repl.ui.render_mcp import render_mcp

        return render_mcp(result)
    if isinstance(result, RewindChoices):
        return render_rewind_targets(result.targets)
    if isinstance(result, RewindOptions):
        return render_rewind_options(result.target)
    if isinstance(result, RewindDone):
        return Text(result.text, style=LEVEL_STYLE[result.level])
    if isinstance(result, ExitRequest):
        return Text("bye")
    if isinstance(result, StatusReport):
        return _rows(result.rows)
    if isinstance(result, PermissionsReport):
        return render_permissions(result)
    if isinstance(result, EditorRequest):
        return Text("edited " + ", ".join(result.paths) + " (memory files are read when a session starts: /clear to load)")
    if isinstance(result, PromptRequest):
        return Text(result.shown)
    if isinstance(result, ClipboardExport):
        lines = len(result.markdown.splitlines())
        return Text(f"Conversation copied to the clipboard ({lines} lines of Markdown); /export FILE writes it to a file")
    if isinstance(result, ConfigReport):
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column(overflow="fold")
        table.add_column(style="dim", no_wrap=True)
        for row in result.rows:
            table.add_row(row.key, show_controls(row.value), row.source)
        hint = Text("/config KEY VALUE saves to " + result.user_file + " (--project: the project's file); KEY --unset removes", style="dim")
        return Group(table, hint)
    if isinstance(result, DoctorReport):
        return render_doctor(result)
    if isinstance(result, MemoryChoices):
        text = Text(f"remember: {result.note}\n", style="bold")
        for number, target in enumerate(result.targets, 1):
            text.append(f"{number:>3}  {target.label}  ")
            text.append(f"{target.path}\n", style="dim")
        return text
    return Text(repr(result))


DOCTOR_MARKS = {"ok": ("✓", "green"), "warn": ("!", "yellow"), "fail": ("✗", "red")}


def render_doctor(report: DoctorReport) -> RenderableType:
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for check in report.checks:
        mark, style = DOCTOR_MARKS[check.status]
        table.add_row(Text(mark, style=style), check.name, show_controls(check.detail))
    failed = sum(c.status == "fail" for c in report.checks)
    summary = Text(f"{failed} problem(s) found" if failed else "everything needed works", style="red" if failed else "green")
    return Group(table, summary)


def _rows(rows: list[tuple[str, str]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim", no_wrap=True)
    table.add_column(overflow="fold")
    for label, value in rows:
        table.add_row(label, show_controls(value))
    return table


def render_permissions(report: PermissionsReport) -> RenderableType:
    rows = [("mode", report.mode)]
    rows += [("allow", rule) for rule in report.allow] or [("allow", "(no rules: Bash and edits ask)")]
    rows += [("deny", rule) for rule in report.deny]
    return Group(
        _rows(rows),
        Text(f"/permissions allow RULE, deny RULE or remove RULE changes {report.settings_file}", style="dim"),
    )


def render_help(report: HelpReport) -> RenderableType:
    commands = Table.grid(padding=(0, 2))
    commands.add_column(style="bold cyan", no_wrap=True)
    commands.add_column()
    for info in report.commands:
        commands.add_row(f"{info.name} {info.usage}".strip(), info.summary)
    keys = Table.grid(padding=(0, 2))
    keys.add_column(style="bold", no_wrap=True)
    keys.add_column()
    for key, what in report.keys:
        keys.add_row(key, what)
    return Group(
        Text("Commands", style="bold underline"),
        commands,
        Text(""),
        Text("Keys", style="bold underline"),
        keys,
    )


def render_cost(report: CostReport) -> RenderableType:
    usage = report.usage
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim")
    table.add_column(justify="right")
    table.add_row("model", report.model)
    table.add_row("requests", f"{report.requests:,}")
    table.add_row("input", f"{usage.input_tokens:,}")
    table.add_row("cache write", f"{usage.cache_creation_input_tokens:,}")
    table.add_row("cache read", f"{usage.cache_read_input_tokens:,}")
    table.add_row("output", f"{usage.output_tokens:,}")
    table.add_row("cost", Text(cost_text(report.cost_usd), style="bold"))
    return table


def context_cells(
    categories: dict[str, int], window: int, cells: int = GRID_COLUMNS * GRID_ROWS
) -> list[str]:
    """The category of each square of the grid: each category gets its share, at least one square if used."""
    if window <= 0:
        return ["Free space"] * cells
    counts = {
        name: round(tokens / window * cells) for name, tokens in categories.items() if name != "Free space"
    }
    for name, tokens in categories.items():
        if name != "Free space" and tokens > 0 and counts[name] == 0:
            counts[name] = 1
    result: list[str] = []
    for name, count in counts.items():
        result.extend([name] * count)
    result = result[:cells]
    return result + ["Free space"] * (cells - len(result))


def _grid(categories: dict[str, int], window: int) -> Text:
    cells = context_cells(categories, window)
    text = Text()
    for row in range(GRID_ROWS):
        for column in range(GRID_COLUMNS):
            name = cells[row * GRID_COLUMNS + column]
            glyph = "□" if name == "Free space" else ("▨" if name == "Autocompact buffer" else "■")
            text.append(glyph + " ", style=CATEGORY_STYLE.get(name, ""))
        if row < GRID_ROWS - 1:
            text.append("\n")
    return text


def _legend(report: Any) -> Table:
    legend = Table.grid(padding=(0, 1))
    legend.add_column(no_wrap=True)
    legend.add_column(no_wrap=True)
    legend.add_column(justify="right", no_wrap=True)
    legend.add_column(justify="right", style="dim", no_wrap=True)
    window = report.context_window or 1
    for name, tokens in report.categories.items():
        glyph = "□" if name == "Free space" else ("▨" if name == "Autocompact buffer" else "■")
        legend.add_row(
            Text(glyph, style=CATEGORY_STYLE.get(name, "")), name, f"{tokens:,}", f"{tokens / window:.1%}"
        )
    return legend


def render_context(report: Any) -> RenderableType:
    head = Text()
    head.append("Context ", style="bold")
    head.append(
        f"{report.model} · {report.used_tokens:,} / {report.context_window:,} tokens ({report.used_share:.1%})"
    )
    head.append(
        f" · {report.view_messages} of {report.history_messages} history entries in the model's view",
        style="dim",
    )
    top = Table.grid(padding=(0, 3))
    top.add_column(no_wrap=True)
    top.add_column()
    top.add_row(_grid(report.categories, report.context_window), _legend(report))
    parts: list[RenderableType] = [head, Text(""), top]
    if report.stages:
        stages = Table(
            title="What each pipeline stage did to the next request (local counts; the total above is anchored on the API's last usage)",
            title_justify="left",
            box=None,
            header_style="bold",
            pad_edge=False,
        )
        columns: tuple[tuple[str, JustifyMethod], ...] = (
            ("stage", "left"),
            ("before", "right"),
            ("after", "right"),
            ("saved", "right"),
            ("items", "right"),
            ("detail", "left"),
        )
        for column, justify in columns:
            stages.add_column(column, justify=justify)
        for stage in report.stages:
            saved = stage.tokens_before - stage.tokens_after
            stages.add_row(
                stage.stage,
                f"{stage.tokens_before:,}",
                f"{stage.tokens_after:,}",
                f"{saved:,}" if saved else "·",
                str(stage.items or "·"),
                stage.detail,
            )
        parts += [Text(""), stages]
    if report.largest:
        largest = Table(
            title="Largest entries in the view",
            title_justify="left",
            box=None,
            header_style="bold",
            pad_edge=False,
            expand=True,
        )
        # The ids are what /snip takes: never cut; the first line gives way on a narrow terminal.
        largest.add_column("id", no_wrap=True, min_width=ID_LENGTH)
        largest.add_column("role", no_wrap=True, min_width=len("tool result"))
        largest.add_column("tokens", justify="right", no_wrap=True, min_width=7)
        largest.add_column("first line", overflow="ellipsis", no_wrap=True, ratio=1)
        for item in report.largest:
            largest.add_row(item.id or "·", item.role, f"{item.tokens:,}", one_line(item.first_line, 200))
        parts += [Text(""), largest]
    return Group(*parts)


def _ago(when: datetime | None, now: datetime) -> str:
    if when is None:
        return "?"
    seconds = max(0, int((now - when).total_seconds()))
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return "just now"


def session_row(info: Any, now: datetime) -> tuple[str, str, str, str, str]:
    prompt = info.title or info.first_prompt or "(no prompt)"
    return (
        info.session_id[:8],
        one_line(prompt, 60),
        _ago(info.last_activity, now),
        str(info.message_count),
        format_size(info.size_bytes),
    )


def render_sessions(result: ResumeChoices, *, now: datetime | None = None) -> RenderableType:
    now = now or datetime.now(UTC)
    if not result.sessions:
        return Text("no other sessions in this project", style="yellow")
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("#", "session", "first prompt", "last activity", "messages", "size"):
        table.add_column(column)
    for number, info in enumerate(result.sessions, 1):
        marker = " (current)" if info.session_id == result.current_id else ""
        row = session_row(info, now)
        table.add_row(str(number), row[0] + marker, *row[1:])
    return table


def snippable_row(item: SnippableMessage) -> tuple[str, str, str, str]:
    """(id, role, tokens, first line); entries without an `[id:]` tag show a dot."""
    return item.id or "·", item.role, f"{item.tokens:,}", one_line(item.first_line, 200)


def render_snippable(items: list[SnippableMessage]) -> RenderableType:
    if not items:
        return Text("nothing to snip", style="yellow")
    table = Table(box=None, header_style="bold", pad_edge=False, expand=True)
    table.add_column("id", no_wrap=True, min_width=ID_LENGTH)
    table.add_column("role", no_wrap=True, min_width=len("tool result"))
    table.add_column("tokens", no_wrap=True, justify="right", min_width=7)
    table.add_column("first line", overflow="ellipsis", ratio=1)
    for item in items:
        table.add_row(*snippable_row(item))
    return table


def prompt_line(text: str, width: int = 80) -> str:
    """A prompt's first non-blank line, made safe to show, cut to `width`."""
    from agent_repl.core.model.visible import show_controls

    line = next((line.strip() for line in text.splitlines() if line.strip()), "(empty)")
    line = show_controls(line, newlines=False)
    return line if len(line) <= width else line[: width - 1] + "…"


def rewind_files_note(target: Any) -> str:
    files = list(target.files)
    if not files:
        return "no file changes"
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return f"{len(files)} file{'s' if len(files) != 1 else ''} changed: {shown}"


def render_rewind_targets(targets: list[Any]) -> RenderableType:
    if not targets:
        return Text("no prompt to rewind to yet", style="yellow")
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("#", "prompt", "files changed since"):
        table.add_column(column, overflow="ellipsis")
    for number, target in enumerate(targets, 1):
        table.add_row(str(number), prompt_line(target.text), rewind_files_note(target))
    return table


def render_rewind_options(target: Any) -> RenderableType:
    from agent_repl.context.rewind import BASH_NOT_TRACKED

    text = Text(f"rewind to before: {prompt_line(target.text)}\n", style="bold")
    text.append(rewind_files_note(target) + "\n", style="dim")
    if target.ran_bash:
        text.append(BASH_NOT_TRACKED + "\n", style="yellow")
    text.append("[b] code and conversation · [c] conversation · [o] code only · empty: never mind")
    return text


def _agents(report: AgentsReport) -> RenderableType:
    """One block per agent type: name, where it is defined, its model and tools, what it is for."""
    parts: list[RenderableType] = [Text("Agent types (Task's subagent_type)", style="bold underline")]
    for row in report.agents:
        text = Text()
        text.append(show_controls(row.name), style="bold")
        text.append(f"  {show_controls(row.source or row.scope)}", style="dim")
        text.append(f"\n  model: {show_controls(row.model)} · tools: {show_controls(', '.join(row.tools) or 'none')}", style="dim")
        text.append(f"\n  {show_controls(row.description)}")
        parts.append(text)
    for problem in report.problems:
        parts.append(Text(show_controls(problem), style="yellow"))
    if report.hint:
        parts.append(Text(report.hint, style="dim"))
    return Group(*parts)
