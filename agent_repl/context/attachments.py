"""What is put back after a compaction (SPEC R3.6.6): the standing context and recently read files.

A summary loses the exact text of files the model was working on and the project instructions
that opened the session, so they are re-injected as meta messages: up to 5 recently read files,
5K tokens each and 50K in all, read from disk as they are now. They are history entries like any
other, so a resume re-sends the recorded text, never a fresh read.
"""

from __future__ import annotations

from pathlib import Path

from agent_repl.context.state import PipelineState
from agent_repl.core.messages import AssistantMessage, Message, UserMessage

MAX_FILES = 5
MAX_TOKENS_PER_FILE = 5_000
MAX_TOKENS_TOTAL = 50_000
MAX_FILE_BYTES = 2_000_000


def standing_context(history: list[Message], kept: list[Message]) -> str:
    """The session's opening meta message (environment, AGENTS.md/CLAUDE.md), unless it is kept anyway."""
    first = history[0] if history else None
    if isinstance(first, UserMessage) and first.is_meta and first not in kept:
        return first.text()
    return ""


def _read_paths_newest_first(messages: list[Message]) -> list[str]:
    paths: list[str] = []
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            for use in reversed(message.tool_uses()):
                path = use.input.get("file_path") if use.name == "Read" else None
                if isinstance(path, str) and path not in paths:
                    paths.append(path)
    return paths


def _numbered(text: str) -> str:
    return "\n".join(f"{n:>6}→{line}" for n, line in enumerate(text.splitlines(), 1))


def reinjection_budget(effective_window: int) -> int:
    """A tenth of the effective window (18K tokens in a 200K window), at most the seeds' 50K, so a
    compaction leaves room to work instead of refilling the context with files."""
    return min(MAX_TOKENS_TOTAL, effective_window // 10)


def recently_read_files(summarized: list[Message], kept: list[Message], state: PipelineState) -> list[str]:
    """Attachment texts for the files read before the compaction point, newest first, within budget."""
    already_kept = set(_read_paths_newest_first(kept))
    texts: list[str] = []
    total = 0
    total_budget = reinjection_budget(state.config.effective_window)
    for path_text in _read_paths_newest_first(summarized):
        if len(texts) == MAX_FILES or total >= total_budget:
            break
        if path_text in already_kept:
            continue
        path = Path(path_text)
        try:
            if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                continue
            content = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        body = _numbered(content)
        tokens = round(state.facts.text_tokens(body) * state.tokens.ratio)
        budget = min(MAX_TOKENS_PER_FILE, total_budget - total)
        if tokens > budget:
            body = body[: int(len(body) * budget / tokens)].rsplit("\n", 1)[0] + "\n[... truncated; Read the file for the rest]"
            tokens = budget
        total += tokens
        texts.append(
            f"<system-reminder>\nThis file was read before the conversation was compacted; its current "
            f"content:\n{path}\n{body}\n</system-reminder>"
        )
    return texts
