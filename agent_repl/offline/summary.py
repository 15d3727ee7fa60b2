"""The agent's own summary, extractive: the summarizer the offline mode and the tests give the emulator.

A request whose last user message starts with `<summary-request>` (compaction) or
`<session-memory-request>` (memory extraction) gets an `<analysis>` section and the nine-section
`<summary>` the agent asks for; an on-demand compaction block holds the nine sections. Nothing is
interpreted: user messages are quoted verbatim, files are the paths the tool calls named, errors
are the first lines of failed tool results.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from agent_repl.contract import (
    CONTINUATION_PREFIX,
    MEMORY_REQUEST_MARKER,
    SUMMARY_REQUEST_MARKER,
)
from agent_repl.emulator.blocks import Block, content_blocks, text_of
from agent_repl.emulator.policies.base import messages, strip_id_tag, tool_input
from agent_repl.emulator.policies.summary import RequestKind

USER_MESSAGES_HEADING = "6. All User Messages:"
# Text injected by the client rather than typed by the user.
META_PREFIXES = (
    SUMMARY_REQUEST_MARKER,
    MEMORY_REQUEST_MARKER,
    "<system-reminder>",
    "<command-",
    "<local-command-",
)
PATH_KEYS = ("file_path", "path", "notebook_path")


def _message_text(message: dict[str, Any]) -> str:
    return "\n".join(
        str(b.get("text", "")) for b in content_blocks(message.get("content")) if b.get("type") == "text"
    )


def is_meta_text(text: str) -> bool:
    return text.lstrip().startswith((*META_PREFIXES, CONTINUATION_PREFIX))


def quoted_in_earlier_summary(text: str, *, continuation: bool = True) -> list[str]:
    """The user messages an earlier summary quoted in its section 6, so they survive every compaction.

    `continuation`: the summary is the client's continuation message (else an API compaction block)."""
    if (continuation and not text.lstrip().startswith(CONTINUATION_PREFIX)) or USER_MESSAGES_HEADING not in text:
        return []
    section = text.split(USER_MESSAGES_HEADING, 1)[1].split("\n\n7. ", 1)[0]
    # Quotes are verbatim, so a later line of a multi-line message is not indented: it belongs to
    # the bullet above it. (Re-rendering the parts reproduces the original text either way.)
    quotes: list[str] = []
    # Split on "\n" only: splitlines() would also break at a "\r" inside a quote and lose it.
    for line in section.strip("\n").split("\n"):
        if line.startswith("   - ") or not quotes:
            quotes.append(line.removeprefix("   - "))
        else:
            quotes[-1] += "\n" + line
    return [q for q in quotes if q != "(none)"]


def user_texts(conversation: list[dict[str, Any]]) -> list[str]:
    """Every non-meta text the user wrote, verbatim (id tags removed), oldest first."""
    quoted = []
    for message in conversation:
        if message.get("role") != "user":
            for block in content_blocks(message.get("content")):
                if block.get("type") == "compaction" and block.get("content"):
                    quoted.extend(quoted_in_earlier_summary(str(block["content"]), continuation=False))
            continue
        for block in content_blocks(message.get("content")):
            if block.get("type") != "text":
                continue
            text = strip_id_tag(str(block.get("text", "")))
            quoted.extend(quoted_in_earlier_summary(text))
            if text.strip() and not is_meta_text(text):
                quoted.append(text)
    return quoted


def _tool_uses(conversation: list[dict[str, Any]]) -> list[Block]:
    return [
        b
        for m in conversation
        if m.get("role") == "assistant"
        for b in content_blocks(m.get("content"))
        if b.get("type") == "tool_use"
    ]


def _paths(uses: list[Block]) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for use in uses:
        arguments = tool_input(use)
        for key in PATH_KEYS:
            value = arguments.get(key)
            if isinstance(value, str) and value and value not in seen:
                seen[value] = str(use.get("name", ""))
    return list(seen.items())


def _errors(conversation: list[dict[str, Any]], uses: list[Block]) -> list[str]:
    names = {str(u.get("id")): str(u.get("name", "")) for u in uses}
    found = []
    for message in conversation:
        for block in content_blocks(message.get("content")):
            if block.get("type") == "tool_result" and block.get("is_error"):
                first = (text_of(block).strip().splitlines() or ["(no text)"])[0][:200]
                found.append(f"{names.get(str(block.get('tool_use_id')), 'a tool')}: {first}")
    return found


def _last_assistant_text(conversation: list[dict[str, Any]]) -> str:
    for message in reversed(conversation):
        if message.get("role") == "assistant":
            text = _message_text(message).strip()
            if text:
                return text
    return ""


def _describe_call(use: Block) -> str:
    arguments = tool_input(use)
    detail = next((str(arguments[k]) for k in ("command", *PATH_KEYS, "pattern") if k in arguments), "")
    return f"{use.get('name', '')} {detail}".strip()


def _bullets(items: list[str], empty: str) -> str:
    return "\n".join(f"   - {item}" for item in items) if items else f"   - {empty}"


def summary_text(body: dict[str, Any], kind: RequestKind) -> str:
    # The request's own marker text is meta, so the whole conversation can be read.
    conversation = messages(body)
    said = user_texts(conversation)
    uses = _tool_uses(conversation)
    counts = Counter(str(u.get("name", "")) for u in uses)
    paths = _paths(uses)
    errors = _errors(conversation, uses)
    extensions = sorted({p.rsplit(".", 1)[-1] for p, _ in paths if "." in p.rsplit("/", 1)[-1]})
    ended_on_tool = (
        bool(conversation)
        and conversation[-1].get("role") == "user"
        and not _message_text(conversation[-1]).strip()
    )
    last_reply = _last_assistant_text(conversation)
    tools_line = ", ".join(f"{name} ({n})" for name, n in counts.most_common()) or "none"
    purpose = "session memory" if kind == "memory" else "compaction summary"
    analysis = (
        f"Extractive {purpose} written by the offline emulator: it quotes and counts, it does not interpret.\n"
        f"The conversation has {sum(1 for m in conversation if m.get('role') == 'user')} user and "
        f"{sum(1 for m in conversation if m.get('role') == 'assistant')} assistant messages, "
        f"{len(said)} typed user messages and {len(uses)} tool calls ({tools_line})."
    )
    first = said[0] if said else "(no user message found)"
    intent = first if len(said) < 2 else f"{first}\n   Latest request: {said[-1]}"
    pending = [said[-1]] if said and (ended_on_tool or not last_reply) else []
    current = last_reply[:600] if last_reply else "(no assistant text yet)"
    if uses:
        current += f"\n   Last tool call: {_describe_call(uses[-1])}"
    next_step = f"Continue with: {said[-1]}" if pending else "Wait for the user's next request."
    sections = [
        f"1. Primary Request and Intent:\n   {intent}",
        "2. Key Technical Concepts:\n"
        + _bullets(
            [f"Tools used: {tools_line}"]
            + ([f"File types: {', '.join('.' + e for e in extensions)}"] if extensions else []),
            "none",
        ),
        "3. Files and Code Sections:\n"
        + _bullets([f"{p} ({tool})" for p, tool in paths], "No files were named in tool calls."),
        "4. Errors and Fixes:\n" + _bullets(errors, "No tool reported an error."),
        f"5. Problem Solving:\n   {len(uses)} tool calls so far ({tools_line}).",
        "6. All User Messages:\n" + _bullets(said, "(none)"),
        "7. Pending Tasks:\n" + _bullets(pending, "None recorded."),
        f"8. Current Work:\n   {current}",
        f"9. Optional Next Step:\n   {next_step}",
    ]
    return f"<analysis>\n{analysis}\n</analysis>\n\n<summary>\n" + "\n\n".join(sections) + "\n</summary>"


def compaction_summary(body: dict[str, Any], instructions: str | None = None) -> str:
    """What an on-demand compaction block holds: the nine sections, without the analysis."""
    text = summary_text(body, "summary")
    sections = text.split("<summary>\n", 1)[1].rsplit("\n</summary>", 1)[0]
    focus = (instructions or "").strip()
    return f"Focus requested: {focus}\n\n{sections}" if focus else sections


class AgentSummarizer:
    """The emulator's `Summarizer` for the agent: its nine sections, quoted and counted."""

    def summary(self, body: dict[str, Any], kind: RequestKind) -> str:
        return summary_text(body, kind)

    def compaction(self, body: dict[str, Any], instructions: str | None) -> str:
        return compaction_summary(body, instructions)
