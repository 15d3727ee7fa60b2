"""What is put back after a compaction (docs/architecture.md 5.6): the standing context, recently read
and edited files, the todo list and the approved plan.

A summary loses the exact text of files the model was working on, the project instructions that
opened the session and the state of its plan, so they are re-injected as meta messages: up to 5
files, 5K tokens each and 50K in all, read from disk as they are now (those edited or written, and
those read in the latest turn when the kept tail does not hold its prompt; a file only read in an
earlier turn is one Read away, and its path is listed); the todo list and the last approved plan in
full. They are history entries like any other, so a
resume re-sends the recorded text, never a fresh read.

Only a file whose Read, Edit or Write was allowed and succeeded is read again, and only if Read
would be allowed to read it now without asking (inside the project or an added folder, or under
a Read rule; never /proc or another refused file, nor a file other programs take commands or
grants from), checked again on the file actually opened. A refused or failed call brings
nothing back: the model named that path, nobody gave it the file.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from agent_repl.context.call_outcomes import succeeded_calls
from agent_repl.context.state import PipelineState
from agent_repl.core.model.messages import AssistantMessage, Message, UserMessage
from agent_repl.core.permissions.protected_paths import protected_reason
from agent_repl.core.permissions.read_access import opened_refusal
from agent_repl.core.permissions.rules import Decision, PermissionPolicy, PermissionRequest
from agent_repl.core.tooling.numbering import number_lines

# Tools whose `file_path` the model worked on: what it read and what it changed.
FILE_TOOLS = frozenset({"Read", "Edit", "Write"})

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


def _read_paths_newest_first(messages: list[Message], succeeded: set[str]) -> list[str]:
    paths: list[str] = []
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            for use in reversed(message.tool_uses()):
                path = use.input.get("file_path") if use.name in FILE_TOOLS and use.id in succeeded else None
                if isinstance(path, str) and path not in paths:
                    paths.append(path)
    return paths


def may_read_again(policy: PermissionPolicy, path: str) -> bool:
    """Whether Read would read `path` now without asking, and it is no file where other programs
    take commands or grants from."""
    if not os.path.isabs(path) or protected_reason(path) is not None:
        return False
    request = PermissionRequest("Read", os.path.normpath(path), reads=True)
    return policy.evaluate(request).decision is Decision.ALLOW_ONCE


def _read_again(policy: PermissionPolicy, path: str) -> str | None:
    """The text of `path` when it may be read again: a regular file, not too large, and the file
    opened is one Read may read (a link swapped after the first check is caught)."""
    if not may_read_again(policy, path):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        opened = os.readlink(f"/proc/self/fd/{fd}") if os.path.isdir("/proc/self/fd") else path
        if opened_refusal(fd) is not None or not may_read_again(policy, opened):
            return None
        chunks: list[bytes] = []
        while (chunk := os.read(fd, MAX_FILE_BYTES + 1)) and sum(map(len, chunks)) <= MAX_FILE_BYTES:
            chunks.append(chunk)
        data = b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")


def _numbered(text: str) -> str:
    return number_lines(text.splitlines())


def reinjection_budget(effective_window: int, share: float = 0.1) -> int:
    """`share` of the effective window (a tenth: 18K tokens in a 200K window), at most the fixed
    50K, so a compaction leaves room to work instead of refilling the context with files."""
    return min(MAX_TOKENS_TOTAL, int(effective_window * share))


@dataclass(frozen=True)
class ReinjectedFile:
    path: str
    text: str


def files_in(messages: list[Message]) -> list[str]:
    """The files the model read, edited or wrote (and the call succeeded) in `messages`, newest first."""
    return _read_paths_newest_first(messages, succeeded_calls(messages))


def _is_typed_prompt(message: Message) -> bool:
    return (
        isinstance(message, UserMessage)
        and not message.is_meta
        and not message.is_compact_summary
        and not message.is_tool_result()
    )


def worked_on(summarized: list[Message], kept: list[Message], succeeded: set[str]) -> set[str]:
    """The files of `summarized` worth their content after the compaction: those edited or written,
    and those read in the latest turn unless the kept tail starts it (a compaction at a turn's start
    keeps the new prompt). A file only read in an earlier, finished turn is left to the summary and
    the list of paths: it is one Read away."""
    changed = {
        str(use.input.get("file_path"))
        for message in summarized
        if isinstance(message, AssistantMessage)
        for use in message.tool_uses()
        if use.name in ("Edit", "Write") and use.id in succeeded
    }
    if any(_is_typed_prompt(m) for m in kept):
        return changed
    start = next((i for i in range(len(summarized) - 1, -1, -1) if _is_typed_prompt(summarized[i])), 0)
    return changed | set(_read_paths_newest_first(summarized[start:], succeeded))


def recently_read_files(
    summarized: list[Message], kept: list[Message], state: PipelineState, policy: PermissionPolicy
) -> list[ReinjectedFile]:
    """The files `worked_on` before the compaction point, newest first, within budget: only those
    whose call succeeded, and which `policy` lets Read read now without asking."""
    succeeded = succeeded_calls([*summarized, *kept])
    already_kept = set(_read_paths_newest_first(kept, succeeded))
    wanted = worked_on(summarized, kept, succeeded)
    texts: list[ReinjectedFile] = []
    total = 0
    total_budget = reinjection_budget(state.config.effective_window, state.config.reinject_share)
    for path_text in _read_paths_newest_first(summarized, succeeded):
        if len(texts) == MAX_FILES or total >= total_budget:
            break
        if path_text in already_kept or path_text not in wanted:
            continue
        path = Path(path_text)
        content = _read_again(policy, path_text)
        if content is None:
            continue
        if "\x00" in content:
            continue  # an image or another binary file: not text to show again
        body = _numbered(content)
        tokens = round(state.facts.text_tokens(body) * state.tokens.ratio)
        budget = min(MAX_TOKENS_PER_FILE, total_budget - total)
        if tokens > budget:
            body = body[: int(len(body) * budget / tokens)].rsplit("\n", 1)[0] + "\n[... truncated; Read the file for the rest]"
            tokens = budget
        total += tokens
        texts.append(
            ReinjectedFile(
                path_text,
                f"<system-reminder>\nThis file was read or edited before the conversation was compacted; "
                f"its current content:\n{path}\n{body}\n</system-reminder>",
            )
        )
    return texts


def latest_approved_plan(messages: list[Message]) -> str:
    """The plan of the last ExitPlanMode call the user approved, or ""."""
    plans: dict[str, str] = {}
    approved = ""
    for message in messages:
        if isinstance(message, AssistantMessage):
            for use in message.tool_uses():
                if use.name == "ExitPlanMode" and isinstance(use.input.get("plan"), str):
                    plans[use.id] = use.input["plan"]
        elif isinstance(message, UserMessage):
            for result in message.tool_results():
                if result.tool_use_id in plans and not result.is_error:
                    approved = plans[result.tool_use_id]
    return approved


def plan_reminder(plan: str) -> str:
    if not plan.strip():
        return ""
    return (
        "<system-reminder>\nThe plan the user approved before the conversation was compacted (carry on "
        f"with it):\n{plan.strip()}\n</system-reminder>"
    )


MAX_ERROR_CHARS = 2_000


def open_error(messages: list[Message]) -> tuple[str, str] | None:
    """The newest failed tool call in `messages` (its tool's name and result text) when no later
    call of that tool succeeded: the error still being worked on, or None."""
    names: dict[str, str] = {}
    latest: tuple[str, str] | None = None
    for message in messages:
        if isinstance(message, AssistantMessage):
            names.update((use.id, use.name) for use in message.tool_uses())
        elif isinstance(message, UserMessage):
            for result in message.tool_results():
                name = names.get(result.tool_use_id, "a tool")
                if result.is_error and result.text().strip():
                    latest = (name, result.text().strip())
                elif latest is not None and latest[0] == name:
                    latest = None
    return latest


def error_reminder(summarized: list[Message], kept: list[Message], summary: str) -> str:
    """The error being worked on before the compaction point, unless the kept tail settles it or
    the summary quotes it; long ones shortened in the middle."""
    error = open_error([*summarized, *kept])
    if error is None or open_error(kept) is not None:
        return ""  # settled later, or the kept tail shows it verbatim
    name, text = error
    if " ".join(text.split()) in " ".join(summary.split()):
        return ""
    if len(text) > MAX_ERROR_CHARS:
        head = MAX_ERROR_CHARS * 2 // 3
        text = f"{text[:head]}\n[... {len(text) - MAX_ERROR_CHARS:,} characters left out ...]\n{text[-(MAX_ERROR_CHARS - head):]}"
    return (
        "<system-reminder>\nThe last error before the conversation was compacted, not yet resolved "
        f"(from {name}):\n{text}\n</system-reminder>"
    )
