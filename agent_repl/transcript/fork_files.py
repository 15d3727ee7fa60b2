"""The files a forked session takes along from the session it was copied from.

A session's folder (`<session>/` beside `<session>.jsonl`) holds, besides sub-agents' transcripts
(`sidechain.copy_subagents`):

    tool-results/<name>                  outputs too large for the context; a `<persisted-output>`
                                         preview in the conversation names the file by its path
    subagents/agent-acompact-<id>.jsonl  Claude Code's record of a compaction request

A fork copies both into its own folder, so nothing it shows the model points into the original
folder, and a later cleanup of the original cannot take the outputs away. In the conversation,
the one rewrite is the path inside a `<persisted-output>` block that names a copied file: it now
names the copy (in tool results, and in our `content-replacement` records, whose replacement is
such a block). Nothing else changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from agent_repl.core.model.messages import Message, TextBlock, ToolResultBlock, UserMessage
from agent_repl.core.tooling.persisted_output import PERSISTED_OUTPUT_CLOSING_TAG, PERSISTED_OUTPUT_TAG
from agent_repl.transcript.paths import ensure_private_dir, write_private_text
from agent_repl.transcript.records import ContentReplacementRecord

R = TypeVar("R")
TOOL_RESULTS = "tool-results"
# A saved output larger than this stays where it is (its preview keeps the original path): the
# copy is read whole to take credentials out.
MAX_COPIED_BYTES = 64 * 1024 * 1024
COMPACTION_FILES = "agent-acompact-*"


def session_folder(transcript: Path) -> Path:
    return transcript.with_suffix("")


def copy_session_files(
    source: Path, target: Path, redact: Callable[[str], str], *, max_bytes: int = MAX_COPIED_BYTES
) -> list[str]:
    """Copy the source session's `tool-results/` files and compaction records into the target's
    folder, with credentials taken out as from the rest of the copy; the names of the tool-results
    files copied. Only regular files are copied, from folders that are no symlinks: a session
    folder someone prepared could otherwise point a "saved output" at any file of the user's."""
    origin, copy = session_folder(source), session_folder(target)
    if not _real_dir(origin):
        return []
    copied: list[str] = []
    results = origin / TOOL_RESULTS
    for path in sorted(results.iterdir()) if _real_dir(results) else []:
        if _real_file(path) and _copy(path, copy / TOOL_RESULTS, redact, max_bytes):
            copied.append(path.name)
    subagents = origin / "subagents"
    for path in sorted(subagents.glob(COMPACTION_FILES)) if _real_dir(subagents) else []:
        if _real_file(path):
            _copy(path, copy / "subagents", redact, max_bytes)
    return copied


def _real_dir(path: Path) -> bool:
    return not path.is_symlink() and path.is_dir()


def _real_file(path: Path) -> bool:
    return not path.is_symlink() and path.is_file()


def _copy(path: Path, directory: Path, redact: Callable[[str], str], max_bytes: int) -> bool:
    try:
        if path.stat().st_size > max_bytes:
            return False
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    ensure_private_dir(directory)
    write_private_text(directory / path.name, redact(text))
    return True


def preview_rewriter(source: Path, target: Path, copied: list[str]) -> Callable[[str], str]:
    """Text -> the same text where, inside each `<persisted-output>` block, a path ending in
    `<source session>/tool-results/<a copied file>` names the target's copy instead."""
    if not copied:
        return lambda text: text
    names = "|".join(re.escape(name) for name in copied)
    # Whatever folder the source was written in (it may have moved since): its last two parts.
    path = re.compile(rf"\S*/{re.escape(session_folder(source).name)}/{TOOL_RESULTS}/({names})(?=\s|$)")
    new_folder = session_folder(target) / TOOL_RESULTS

    def rewrite(text: str) -> str:
        if PERSISTED_OUTPUT_TAG not in text:
            return text
        parts = text.split(PERSISTED_OUTPUT_TAG)
        for i in range(1, len(parts)):
            inside, closing, rest = parts[i].partition(PERSISTED_OUTPUT_CLOSING_TAG)
            parts[i] = path.sub(lambda m: str(new_folder / m.group(1)), inside) + closing + rest
        return PERSISTED_OUTPUT_TAG.join(parts)

    return rewrite


def point_to_copies(history: list[Message], rewrite: Callable[[str], str]) -> None:
    """In place: every tool result's text through `rewrite` (a `preview_rewriter`)."""
    for message in history:
        if not isinstance(message, UserMessage) or isinstance(message.content, str):
            continue
        for block in message.content:
            if not isinstance(block, ToolResultBlock):
                continue
            if isinstance(block.content, str):
                block.content = rewrite(block.content)
            else:
                for part in block.content:
                    if isinstance(part, TextBlock):
                        part.text = rewrite(part.text)


def record_pointing_to_copies(record: R, rewrite: Callable[[str], str]) -> R:
    """A `content-replacement` record whose replacement names the copies; any other record as it is."""
    if isinstance(record, ContentReplacementRecord):
        return record.model_copy(update={"replacement": rewrite(record.replacement)})
    return record
