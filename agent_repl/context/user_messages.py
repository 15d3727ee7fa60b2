"""After a compaction, what the user typed, put back word for word (docs/architecture.md 5.6).

A summary written by a model keeps what it judged important; the user's own words are what a
compaction must not lose. So every compaction (ours, the API's, session memory, reactive) puts
the messages the user typed in the whole session back as a meta message after the boundary,
independent of what the summary says: chosen newest first within a share of the window, the
older ones shortened in the middle (with the transcript's path for the rest) once the budget
runs low, and none the summary already quotes word for word or the kept tail holds anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeGuard

from agent_repl.context.compaction_sizes import is_typed_prompt
from agent_repl.core.model.messages import Message, UserMessage

# The least a shortened message keeps (head and tail together), in tokens: below that a message
# says too little to be worth its place, and the older ones are only counted.
MIN_SHORTENED_TOKENS = 60
# Records in the user's role that hold what a command printed or a background task reported
# (Claude Code transcripts carry them so): not what the user said.
NOT_TYPED_STARTS = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
)
LEFT_OUT_MARK = "[... {count:,} characters left out; the whole message is in the transcript{where} ...]"


def is_typed(message: Message) -> TypeGuard[UserMessage]:
    """A message the user typed: not meta, not a summary, not tool results nor a command's output."""
    return (
        is_typed_prompt(message)
        and bool(text := message.text().strip())
        and not text.startswith(NOT_TYPED_STARTS)
    )


def user_messages_budget(effective_window: int, share: float) -> int:
    return max(0, int(effective_window * share))


@dataclass(frozen=True)
class ChosenMessage:
    text: str
    shortened: bool


def _normalized(text: str) -> str:
    return " ".join(text.split())


def shorten_middle(text: str, keep_chars: int, transcript_path: str | None) -> str:
    """`text` with its middle left out so about `keep_chars` characters remain, head and tail."""
    if len(text) <= keep_chars:
        return text
    head = keep_chars * 2 // 3
    tail = keep_chars - head
    where = f" at {transcript_path}" if transcript_path else ""
    mark = LEFT_OUT_MARK.format(count=len(text) - head - tail, where=where)
    return f"{text[:head]}\n{mark}\n{text[len(text) - tail:] if tail else ''}".rstrip()


def choose_user_messages(
    texts: list[str],
    budget: int,
    count_tokens: Callable[[str], int],
    *,
    quoted_in: str = "",
    transcript_path: str | None = None,
) -> tuple[list[ChosenMessage], int]:
    """The messages to put back, oldest first, and how many were left out entirely.

    Newest first: each message goes in whole while it fits in what is left of `budget`; one that
    does not is shortened in the middle to what is left; once less than `MIN_SHORTENED_TOKENS`
    remain, the older ones are left out. A message `quoted_in` holds word for word (spacing
    aside) is skipped, since the summary already carries it."""
    quoted = _normalized(quoted_in)
    chosen: list[ChosenMessage] = []
    left_out = 0
    remaining = budget
    for text in reversed(texts):
        if quoted and _normalized(text) in quoted:
            continue
        tokens = count_tokens(text)
        if tokens <= remaining:
            chosen.append(ChosenMessage(text, False))
            remaining -= tokens
        elif remaining >= MIN_SHORTENED_TOKENS:
            keep_chars = int(len(text) * remaining / tokens)
            short = shorten_middle(text, keep_chars, transcript_path)
            while count_tokens(short) > remaining and keep_chars > 0:
                keep_chars = keep_chars * 3 // 4
                short = shorten_middle(text, keep_chars, transcript_path)
            chosen.append(ChosenMessage(short, True))
            remaining -= count_tokens(short)
        else:
            left_out += 1
    chosen.reverse()
    return chosen, left_out


def typed_texts(history: Iterable[Message], skip: set[str]) -> list[str]:
    """What the user typed in `history`, oldest first, except the entries in `skip`."""
    return [m.text().strip() for m in history if m.uuid not in skip and is_typed(m)]


def user_messages_reminder(chosen: list[ChosenMessage], left_out: int, transcript_path: str | None) -> str:
    if not chosen and not left_out:
        return ""
    lines = [
        "<system-reminder>",
        "The messages the user typed before the conversation was compacted, oldest first, word for word "
        "(those the summary quotes are not repeated here):",
    ]
    if left_out:
        where = f" (the transcript at {transcript_path} has them)" if transcript_path else ""
        lines.append(f"({left_out} older message{'s' if left_out != 1 else ''} left out for room{where})")
    for number, message in enumerate(chosen, 1):
        lines += ["", f"<user-message {number}{' shortened' if message.shortened else ''}>", message.text, "</user-message>"]
    lines.append("</system-reminder>")
    return "\n".join(lines)
