"""The words of compaction: the summary request, and the message that carries a summary forward.

The request asks for nine sections after an `<analysis>` scratch section, which is stripped
before the summary is used. Requests open with a marker so the local emulator's
models know what they are being asked.
"""

from __future__ import annotations

# The markers are agent_repl.contract's: the emulator's offline models read them too.
from agent_repl.contract import CONTINUATION_PREFIX, MEMORY_REQUEST_MARKER, SUMMARY_REQUEST_MARKER

SECTIONS = (
    "Primary Request and Intent",
    "Key Technical Concepts",
    "Files and Code Sections",
    "Errors and Fixes",
    "Problem Solving",
    "All User Messages",
    "Pending Tasks",
    "Current Work",
    "Optional Next Step",
)

_SUMMARY_INSTRUCTIONS = """\
{marker}
Stop here and write a summary of the whole conversation so far, so that the work can go on from \
it alone once the earlier messages are gone. Do not call any tools; answer with text only.

First think in an <analysis> section: go through the conversation in order and note what the \
user asked for, what was done, which files and commands mattered, what failed and how it was \
fixed, and where things stand. The analysis is thrown away afterwards.

Then write the summary inside <summary> tags, with these nine numbered sections:
{sections}

Be precise and complete where it matters for going on: keep file paths, function names, \
commands and error messages exact. In section 6, quote every message the user typed, word for \
word, oldest first, including any quoted in an earlier summary; leave out tool results and \
system text. Section 9 names the single next step only if it follows directly from the user's \
latest request."""

_MEMORY_INSTRUCTIONS = """\
{marker}
Do not answer the user and do not call any tools. Update the session notes: write down, as \
plain Markdown, the durable facts of this session so far that would be needed to continue the \
work from the notes alone: the project's structure and conventions, the user's preferences and \
instructions, decisions taken and why, the task's progress and what remains. Keep paths and \
names exact. Use the same nine numbered sections, inside <summary> tags, after a short \
<analysis>:
{sections}

In section 6, quote every message the user typed, word for word."""


def _numbered_sections() -> str:
    return "\n".join(f"{i}. {name}" for i, name in enumerate(SECTIONS, 1))


def summary_request(instructions: str | None = None) -> str:
    text = _SUMMARY_INSTRUCTIONS.format(marker=SUMMARY_REQUEST_MARKER, sections=_numbered_sections())
    if instructions and instructions.strip():
        text += f"\n\nThe user asked this summary to focus on: {instructions.strip()}"
    return text


def memory_request() -> str:
    return _MEMORY_INSTRUCTIONS.format(marker=MEMORY_REQUEST_MARKER, sections=_numbered_sections())


_ANALYSIS_OPEN, _ANALYSIS_CLOSE = "<analysis>", "</analysis>"
_SUMMARY_OPEN, _SUMMARY_CLOSE = "<summary>", "</summary>"


def _without_analysis(reply: str) -> str:
    """The reply with its analysis section taken out: from the first `<analysis>` to the first
    `</analysis>` after it (nothing is taken when the analysis is never closed)."""
    start = reply.find(_ANALYSIS_OPEN)
    end = reply.find(_ANALYSIS_CLOSE, start + len(_ANALYSIS_OPEN)) if start >= 0 else -1
    if end < 0:
        return reply
    return reply[:start] + reply[end + len(_ANALYSIS_CLOSE) :]


def extract_summary(reply: str) -> str:
    """The summary without its analysis; the whole reply (minus analysis) when there are no tags.

    The summary runs from the first `<summary>` to the last `</summary>`: a summary may quote the
    tag itself (a `<task-notification>`, an HTML `<details><summary>`), and the last closing tag
    is the one that closes the section. A summary that was never closed runs to the end."""
    text = _without_analysis(reply)
    start = text.find(_SUMMARY_OPEN)
    if start < 0:
        return text.strip()
    body = text[start + len(_SUMMARY_OPEN) :]
    end = body.rfind(_SUMMARY_CLOSE)
    return (body[:end] if end >= 0 else body).strip()


def continuation_message(summary: str, transcript_path: str | None = None) -> str:
    """The user-role message that opens the view after a compaction."""
    parts = [
        f"{CONTINUATION_PREFIX} that ran out of context. The summary below covers the earlier part "
        "of the conversation.",
        "",
        summary,
    ]
    if transcript_path:
        parts += [
            "",
            f"The full transcript of the earlier part is at {transcript_path}; read it only if you need "
            "an exact detail the summary does not have.",
        ]
    parts += [
        "",
        "Continue from where the conversation left off, without asking the user to repeat anything.",
    ]
    return "\n".join(parts)
