"""After a compaction, the paths the session's earlier tool calls named, as a short list.

A summary written by a model keeps what it judged important and may drop the file a search
found or the script a command ran. The list is deterministic: every path a tool call before the
kept tail named (a `file_path`/`path` argument, a file name in a shell command), newest first, so
the model can find its way back to them without depending on the summary remembering them. It
reads the whole history, so paths named before earlier compactions stay listed too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent_repl.context.call_outcomes import ran_calls
from agent_repl.core.model.messages import AssistantMessage, Message, ToolUseBlock

PATH_ARGUMENTS = ("file_path", "path", "notebook_path")
COMMAND_ARGUMENT = "command"
# A file name with an extension, with any directory part, as a shell command writes it.
_FILE_IN_COMMAND = re.compile(
    r"(?<![\w/.~-])((?:~|\.{1,2})?/?(?:[\w.@+-]+/)*[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/-])"
)
MAX_PATHS = 200


def paths_named(use: ToolUseBlock) -> list[str]:
    """The paths one tool call names: its path arguments, and file names in a shell command."""
    found = [v for key in PATH_ARGUMENTS if isinstance(v := use.input.get(key), str) and v.strip()]
    command = use.input.get(COMMAND_ARGUMENT)
    if isinstance(command, str):
        found += _FILE_IN_COMMAND.findall(command)
    return found


def _newest_first(messages: Iterable[Message], ran: set[str]) -> list[str]:
    paths: dict[str, None] = {}
    for message in reversed(list(messages)):
        if isinstance(message, AssistantMessage):
            for use in reversed(message.tool_uses()):
                if use.id not in ran:
                    continue
                for path in paths_named(use):
                    paths.setdefault(path, None)
    return list(paths)


def touched_files_reminder(history: list[Message], kept: list[Message], *, max_paths: int = MAX_PATHS) -> str:
    """The reminder that lists what `history` outside `kept` named, or "" when there is nothing."""
    kept_uuids = {m.uuid for m in kept}
    ran = ran_calls([*history, *kept])
    in_kept = set(_newest_first(kept, ran))
    paths = [p for p in _newest_first((m for m in history if m.uuid not in kept_uuids), ran) if p not in in_kept]
    if not paths:
        return ""
    shown, more = paths[:max_paths], len(paths) - max_paths
    lines = "\n".join(f"- {path}" for path in shown)
    tail = f"\n(and {more} older ones)" if more > 0 else ""
    return (
        "<system-reminder>\nPaths the tool calls named before the conversation was compacted, newest "
        f"first (the summary may not mention them all):\n{lines}{tail}\n</system-reminder>"
    )
