"""A typed or pasted prompt too big for the window becomes a file the model can Read.

A quarter of the context window is the limit: the rest must still hold the system prompt, the
tools, the history and the reply, and a compaction must be able to summarize around the prompt
(the newest prompt is never summarized away). Past the limit the full text goes to the session's
tool-results directory like a big tool result, and the prompt sent carries its preview and path.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from agent_repl.core.model.tokens import estimate_tokens
from agent_repl.core.tooling.persisted_output import persist_text

WINDOW_SHARE = 4  # a prompt may take up to 1/WINDOW_SHARE of the window
_NOTE = re.compile(r"The user's prompt was too large to send whole \([\d,]+ bytes\); it is saved in full at (.+?) \(use the Read tool")


def prompt_limit(context_window: int) -> int:
    return max(1, context_window // WINDOW_SHARE)


def attach_if_large(prompt: str, context_window: int, directory: Path | None) -> str:
    """The prompt itself, or (past the limit) a note with the saved file's path and a preview."""
    limit = prompt_limit(context_window)
    if directory is None or len(prompt) <= limit // 2:
        return prompt  # too short to pass the limit whatever the tokenizer
    if len(prompt) <= limit * 8 and estimate_tokens(prompt) <= limit:
        return prompt
    saved = persist_text(prompt, f"prompt-{uuid.uuid4().hex}", directory)
    return (
        f"The user's prompt was too large to send whole ({saved.size_bytes:,} bytes); it is saved in full "
        f"at {saved.path} (use the Read tool on that path for the rest).\n\n{saved.preview}"
    )


def original_prompt(sent: str) -> str:
    """What the user typed or pasted: the saved file's text for a prompt `attach_if_large` turned into
    a note (while the file is there), else `sent` itself."""
    match = _NOTE.match(sent)
    if match is None:
        return sent
    try:
        return Path(match.group(1)).read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return sent
