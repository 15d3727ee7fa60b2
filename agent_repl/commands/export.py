"""/export [FILE]: the conversation as Markdown, to a file (relative to the working directory) or,
with no FILE, to the clipboard where the terminal offers one (else to a file named by the time)."""

from __future__ import annotations

from pathlib import Path

from agent_repl.commands.registry import CommandContext
from agent_repl.commands.results import ClipboardExport, CommandResult, TextOutput
from agent_repl.context.context_session import whole_history
from agent_repl.transcript.markdown_export import conversation_markdown


def default_export_name(session_id: str, stamp: str) -> str:
    return f"conversation-{stamp}-{session_id[:8]}.md"


def write_export(markdown: str, path: Path) -> TextOutput:
    """Write the export; an existing file is replaced, as Claude Code's /export does, and said so."""
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(markdown, encoding="utf-8")
    except OSError as exc:
        return TextOutput(f"could not write {path}: {exc.strerror or exc}", level="error")
    verb = "replaced" if existed else "wrote"
    return TextOutput(f"Conversation exported: {verb} {path} ({len(markdown.splitlines())} lines of Markdown)")


async def export_command(ctx: CommandContext, args: str) -> CommandResult:
    session = ctx.session
    now = session.clock()
    markdown = conversation_markdown(
        whole_history(session), title=f"Conversation {session.session_id[:8]} in {session.cwd}", exported_at=now
    )
    name = args.strip()
    if name:
        path = Path(name).expanduser()
        if not path.is_absolute():
            path = session.cwd / path
        if path.is_dir():
            return TextOutput(f"{path} is a directory; give a file name", level="error")
        return write_export(markdown, path)
    fallback = session.cwd / default_export_name(session.session_id, now.strftime("%Y-%m-%d-%H%M%S"))
    if not ctx.interactive:
        return write_export(markdown, fallback)
    return ClipboardExport(markdown, fallback)

