"""The summaries the emulator writes in the replay, by condition: realistic, lossy or extractive.

Each is an emulator `Summarizer` (`EmulatorServer(summarizer=...)`), so it answers every summary
request the emulator sees: our compaction requests and the peers' (the `<summary-request>`
marker), session-memory requests, and the API's on-demand compaction (`compaction` blocks).

- `extractive` (agent_repl.offline.summary): quotes every user message and lists the paths;
  600-1,600 output tokens. It keeps everything verbatim, so it cannot show what a summary loses.
- `realistic` (the acceptance condition): the extractive content, padded to the size of a real
  Claude Code summary (`summary_sizes.json`, written by `calibrate_summaries`) with a work log
  drawn from the conversation itself (tool calls and their first output lines, the assistant's
  notes), so the output the meter charges is what a real summary costs.
- `lossy`: the same size, and nothing verbatim: no user message, no path, no todo item, no fact the
  user gave; counts and generic prose only. What a strategy keeps under it, it keeps by itself.

Sizes and filler are drawn with a generator seeded by the request's conversation, so a replay
repeats exactly.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from typing import Any

from agent_repl.emulator.blocks import content_blocks, text_of
from agent_repl.emulator.policies.base import messages, tool_input
from agent_repl.emulator.policies.summary import RequestKind, Summarizer
from agent_repl.offline.summary import AgentSummarizer, compaction_summary, summary_text, user_texts
from benchmarks.replay.calibrate_summaries import SummarySizes

CONDITIONS = ("realistic", "lossy", "extractive")
DEFAULT_CONDITION = "realistic"
WORK_LOG_HEADING = "   Work log:"
_LINE_CHARS = 160


def _seed(body: dict[str, Any], kind: str) -> random.Random:
    """A generator seeded by what the request summarizes (its kind, size and first user text)."""
    conversation = messages(body)
    said = user_texts(conversation)
    key = f"{kind}|{len(conversation)}|{said[0] if said else ''}"
    return random.Random(hashlib.sha256(key.encode()).digest())


def _target(sizes: SummarySizes, rng: random.Random) -> int:
    low, high = sizes.target_chars
    return rng.randint(low, high)


def _first_line(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line[:_LINE_CHARS]


def work_log(conversation: list[dict[str, Any]]) -> list[str]:
    """One line per tool call (what ran and the first line it printed) and per assistant note, in order."""
    results: dict[str, str] = {}
    for message in conversation:
        for block in content_blocks(message.get("content")):
            if block.get("type") == "tool_result":
                results[str(block.get("tool_use_id"))] = _first_line(text_of(block))
    lines: list[str] = []
    for message in conversation:
        if message.get("role") != "assistant":
            continue
        for block in content_blocks(message.get("content")):
            if block.get("type") == "text" and (note := _first_line(str(block.get("text", "")))):
                lines.append(f"The assistant noted: {note}")
            elif block.get("type") == "tool_use":
                arguments = tool_input(block)
                detail = next((str(arguments[k]) for k in ("command", "file_path", "path", "pattern") if k in arguments), "")
                outcome = results.get(str(block.get("id")), "") or "(no output)"
                lines.append(f"{block.get('name', '')} {detail[:_LINE_CHARS]}".strip() + f": {outcome}")
    return lines


# Generic prose for the lossy summary and to top up a short work log: no name, path or quote.
_SUBJECTS = ("The assistant", "The work", "The investigation", "The last steps", "The session")
_VERBS = ("looked into", "went through", "compared", "checked", "followed up on", "narrowed down")
_OBJECTS = (
    "how the code behaves", "the structure of the project", "the output of the earlier commands",
    "the parts the user cared about", "the open questions", "the behaviour under test",
    "the errors seen earlier", "the places a change would touch", "the configuration involved",
)
_ENDINGS = (
    "and kept going with the plan.", "before moving to the next step.", "and noted what was left.",
    "to confirm the earlier reading.", "without changing the approach.", "as the user had asked.",
)


def generic_sentences(rng: random.Random, chars: int) -> list[str]:
    """Plausible sentences that name nothing, about `chars` characters in all."""
    sentences: list[str] = []
    total = 0
    while total < chars:
        sentence = f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} {rng.choice(_ENDINGS)}"
        sentences.append(sentence)
        total += len(sentence) + 6
    return sentences


def _pad_section_five(sections: str, filler: list[str]) -> str:
    """`sections` (the nine, as text) with `filler` as a work log at the end of section 5."""
    marker = "\n\n6. All User Messages:"
    log = "\n".join([WORK_LOG_HEADING, *(f"   - {line}" for line in filler)])
    head, found, tail = sections.partition(marker)
    return f"{head}\n{log}{found}{tail}" if found else f"{sections}\n{log}"


def _fill(sections: str, target: int, conversation: list[dict[str, Any]], rng: random.Random) -> str:
    """The sections padded to about `target` characters with the work log, then generic prose."""
    missing = target - len(sections)
    if missing <= 0:
        return sections
    lines = work_log(conversation)
    if len(lines) > 1:
        # A real summary does not keep every step: a seeded subset, in order, when there is too much.
        share = min(1.0, missing / max(1, sum(len(ln) + 6 for ln in lines)))
        lines = [ln for ln in lines if rng.random() < share] or lines[:1]
    chosen: list[str] = []
    for line in lines:
        if missing - len(line) - 6 < 0:
            break
        chosen.append(line)
        missing -= len(line) + 6
    if missing > 0:
        chosen += generic_sentences(rng, missing)
    return _pad_section_five(sections, chosen)


_SHORT_QUOTE = 240
_USER_SECTION = "\n\n6. All User Messages:"
_AFTER_USER_SECTION = "\n\n7. "


def _trim_repeats(sections: str, said: list[str]) -> str:
    """Long user messages quoted outside section 6 (the intent, the pending task, the next step)
    shortened to their opening: section 6 quotes each in full, and a real summary does not repeat
    a long request four times."""
    head, found, rest = sections.partition(_USER_SECTION)
    if not found:
        return sections
    own, after_found, tail = rest.partition(_AFTER_USER_SECTION)
    for text in sorted({t for t in said if len(t) > _SHORT_QUOTE}, key=len, reverse=True):
        short = text[:_SHORT_QUOTE].rstrip() + " [...]"
        head, tail = head.replace(text, short), tail.replace(text, short)
    return f"{head}{found}{own}{after_found}{tail}"


def _split_summary(text: str) -> tuple[str, str]:
    """(analysis part with its `<summary>` opener, the sections) of an extractive reply."""
    head, _, rest = text.partition("<summary>\n")
    return head + "<summary>\n", rest.rsplit("\n</summary>", 1)[0]


class RealisticSummarizer:
    """The extractive summary at the size of a real Claude Code summary."""

    def __init__(self, sizes: SummarySizes | None = None) -> None:
        self.sizes = sizes or SummarySizes.load()

    def summary(self, body: dict[str, Any], kind: RequestKind) -> str:
        rng = _seed(body, kind)
        head, sections = _split_summary(summary_text(body, kind))
        sections = _trim_repeats(sections, user_texts(messages(body)))
        return f"{head}{_fill(sections, _target(self.sizes, rng), messages(body), rng)}\n</summary>"

    def compaction(self, body: dict[str, Any], instructions: str | None) -> str:
        rng = _seed(body, "compaction")
        sections = _trim_repeats(compaction_summary(body, instructions), user_texts(messages(body)))
        return _fill(sections, _target(self.sizes, rng), messages(body), rng)


def _count_tools(conversation: list[dict[str, Any]]) -> Counter[str]:
    return Counter(
        str(b.get("name", ""))
        for m in conversation
        if m.get("role") == "assistant"
        for b in content_blocks(m.get("content"))
        if b.get("type") == "tool_use"
    )


def lossy_sections(conversation: list[dict[str, Any]], rng: random.Random, target: int) -> str:
    """The nine sections with counts and generic prose only: nothing the conversation said, verbatim."""
    said = len(user_texts(conversation))
    tools = _count_tools(conversation)
    calls = sum(tools.values())
    tools_line = ", ".join(f"{name} ({n})" for name, n in tools.most_common()) or "none"
    sections = [
        "1. Primary Request and Intent:\n   The user asked for work on their project; the details were in their "
        "own messages, which this summary does not repeat.",
        f"2. Key Technical Concepts:\n   - Tools used: {tools_line}",
        "3. Files and Code Sections:\n   - Several files were read and searched; their names are not kept here.",
        "4. Errors and Fixes:\n   - Some commands failed along the way and were worked around.",
        f"5. Problem Solving:\n   {calls} tool calls so far.",
        f"6. All User Messages:\n   - The user wrote {said} message{'s' if said != 1 else ''}, with instructions "
        "and follow-up requests (paraphrased, not quoted).",
        "7. Pending Tasks:\n   - Whatever the latest request asked that is not done yet.",
        "8. Current Work:\n   The assistant was working through the latest request with tool calls.",
        "9. Optional Next Step:\n   Carry on with the user's latest request.",
    ]
    text = "\n\n".join(sections)
    return _pad_section_five(text, generic_sentences(rng, target - len(text)))


class LossySummarizer:
    """A summary of the realistic size that keeps nothing verbatim."""

    def __init__(self, sizes: SummarySizes | None = None) -> None:
        self.sizes = sizes or SummarySizes.load()

    def summary(self, body: dict[str, Any], kind: RequestKind) -> str:
        rng = _seed(body, kind)
        conversation = messages(body)
        analysis = (
            f"A paraphrasing summary: {len(conversation)} messages, nothing quoted."
        )
        sections = lossy_sections(conversation, rng, _target(self.sizes, rng))
        return f"<analysis>\n{analysis}\n</analysis>\n\n<summary>\n{sections}\n</summary>"

    def compaction(self, body: dict[str, Any], instructions: str | None) -> str:
        rng = _seed(body, "compaction")
        return lossy_sections(messages(body), rng, _target(self.sizes, rng))


def summarizer_for(condition: str) -> Summarizer:
    """The summarizer of a summary condition: `realistic`, `lossy` or `extractive`."""
    if condition == "realistic":
        return RealisticSummarizer()
    if condition == "lossy":
        return LossySummarizer()
    if condition == "extractive":
        return AgentSummarizer()
    raise ValueError(f"unknown summary condition {condition!r}: one of {', '.join(CONDITIONS)}")
