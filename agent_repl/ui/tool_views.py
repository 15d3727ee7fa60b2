"""How the rich bodies of tool calls look, in the full-screen app and in the inline REPL alike.

One place, keyed by the body kind a tool's display declares and Claude Code's input and result
shapes, so our live Edit, Write and TodoWrite calls and the ones in a resumed Claude Code session
render the same way:

- a diff (Edit, Write, MultiEdit): a syntax-coloured unified diff from the display's hunks,
  removed lines on red, added lines on green;
- a checklist (TodoWrite), a plan (ExitPlanMode), the pages of the API's web tools.

Text from files and models goes through `show_controls` before it reaches the terminal.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text

from agent_repl.core.model.todos import STATUS_MARKS, Todo, call_todos
from agent_repl.core.model.visible import show_controls
from agent_repl.core.model.web_results import search_hits
from agent_repl.core.tooling.diffs import patch_stats
from agent_repl.core.tooling.display import BodyKind, ToolDisplay

REMOVED_STYLE = "on #4b1d1d"
ADDED_STYLE = "on #17391f"
THEME = "monokai"
MAX_DIFF_LINES = 400


def _highlight(lines: list[str], path: str) -> list[Text]:
    """Each line syntax-coloured in the context of its neighbours (one hunk side at a time)."""
    if not lines:
        return []
    code = "\n".join(show_controls(line, newlines=False) for line in lines)
    try:
        lexer = Syntax.guess_lexer(path or "file.txt", code)
        highlighted = Syntax(code, lexer, theme=THEME, background_color="default").highlight(code)
    except Exception:  # an unknown lexer or a lexer bug: plain text is fine
        highlighted = Text(code)
    parts = highlighted.split("\n", allow_blank=True)
    while len(parts) < len(lines):
        parts.append(Text(""))
    return [part.copy() for part in parts[: len(lines)]]


def render_hunks(hunks: list[dict[str, Any]], path: str = "", *, max_lines: int = MAX_DIFF_LINES) -> Text:
    """The hunks as a coloured unified diff with old and new line numbers."""
    out = Text(no_wrap=False)
    if not hunks:
        out.append("(no changes)", style="dim")
        return out
    widest = max(max(h.get("oldStart", 0) + h.get("oldLines", 0), h.get("newStart", 0) + h.get("newLines", 0)) for h in hunks)
    width = len(str(widest))
    shown = 0
    for index, hunk in enumerate(hunks):
        lines = [line for line in hunk.get("lines") or [] if isinstance(line, str)]
        old_side = [line[1:] for line in lines if line[:1] in (" ", "-")]
        new_side = [line[1:] for line in lines if line[:1] in (" ", "+")]
        old_lit, new_lit = iter(_highlight(old_side, path)), iter(_highlight(new_side, path))
        if index:
            out.append(" " * width + " ⋮\n", style="dim")
        old_no = int(hunk.get("oldStart") or 0) or 1
        new_no = int(hunk.get("newStart") or 0) or 1
        for line in lines:
            if shown >= max_lines:
                out.append(f"… {sum(len(h.get('lines') or []) for h in hunks) - shown} more diff lines\n", style="dim")
                return out
            shown += 1
            tag = line[:1]
            if tag == "-":
                body, number, style, old_no = next(old_lit, Text(line[1:])), old_no, REMOVED_STYLE, old_no + 1
            elif tag == "+":
                body, number, style, new_no = next(new_lit, Text(line[1:])), new_no, ADDED_STYLE, new_no + 1
            else:
                next(old_lit, None)
                body, number, style = next(new_lit, Text(line[1:])), new_no, ""
                old_no, new_no = old_no + 1, new_no + 1
            out.append(f"{number:>{width}} ", style="dim")
            marker = Text(f"{tag or ' '} ", style=("bold red" if tag == "-" else "bold green" if tag == "+" else "dim"))
            row = Text.assemble(marker, body)
            if style:
                row.stylize(style)
            out.append_text(row)
            out.append("\n")
    out.rstrip()
    return out


def diff_summary(hunks: list[dict[str, Any]]) -> str:
    return patch_stats(hunks).text()


def render_checklist(todos: list[Todo]) -> Text:
    text = Text()
    for index, todo in enumerate(todos):
        if index:
            text.append("\n")
        mark = STATUS_MARKS[todo.status]
        if todo.status == "completed":
            text.append(f"{mark} ", style="green")
            text.append(show_controls(todo.content, newlines=False), style="dim strike")
        elif todo.status == "in_progress":
            text.append(f"{mark} ", style="bold yellow")
            text.append(show_controls(todo.activeForm, newlines=False), style="bold")
        else:
            text.append(f"{mark} ")
            text.append(show_controls(todo.content, newlines=False))
    return text


def _mapping(value: object) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def tool_body(display: ToolDisplay, tool_input: dict[str, Any], structured: Any = None) -> RenderableType | None:
    """The rich body of a tool call whose display has one (a diff, a checklist), else None (the
    call shows its input and result)."""
    kind = display.body
    if kind is BodyKind.DIFF:
        hunks = display.hunks(tool_input, structured)
        if hunks is None:
            return None
        path = str(tool_input.get("file_path") or (structured or {}).get("filePath") or "")
        return render_hunks(hunks, path)
    if kind is BodyKind.CHECKLIST:
        todos = call_todos(tool_input, structured)
        return render_checklist(todos) if todos is not None else None
    if (
        kind is BodyKind.SEARCH_RESULTS
        and isinstance(structured, dict)
        and structured.get("type") == "web_search_tool_result"
    ):
        text = Text()
        for index, (title, url, age) in enumerate(search_hits(structured)):
            text.append(("\n" if index else "") + show_controls(title, newlines=False), style="bold")
            text.append(f"  {show_controls(url, newlines=False)}" + (f"  ({age})" if age else ""), style="dim")
        return text if text.plain else None
    if kind is BodyKind.PAGE and isinstance(structured, dict) and structured.get("type") == "web_fetch_tool_result":
        document = _mapping(_mapping(structured.get("content")).get("content"))
        data = str((document.get("source") or {}).get("data", ""))
        if not data:
            return None
        lines = data.splitlines()
        shown = "\n".join(lines[:12]) + (f"\n… {len(lines) - 12} more lines" if len(lines) > 12 else "")
        return Text(show_controls(shown), style="dim")
    if kind is BodyKind.PLAN and isinstance(tool_input.get("plan"), str):
        from rich.markdown import Markdown

        return Group(Text("Plan:", style="bold"), Markdown(show_controls(tool_input["plan"])))
    return None
