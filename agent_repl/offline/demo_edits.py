"""The demo model's file changes: "edit X: replace A with B" and "write X: TEXT".

It works the way the real tools want: Read the file first, then Edit it (or Write it, reading
first when the file already exists), then say what happened. Each step is decided from the
conversation since the user's latest prompt, so the policy keeps no state of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agent_repl.emulator.blocks import Block, content_blocks, text_of
from agent_repl.emulator.policies.base import (
    Reply,
    messages,
    strip_id_tag,
    text_block,
    tool_use_block,
    tool_use_id,
)
from agent_repl.offline.demo_intents import absolute
from agent_repl.offline.summary import is_meta_text

_Q = r"[`'\"]?"
_EDIT = re.compile(
    r"^(?:please\s+)?(?:edit|change|in)\s+" + _Q + r"(?P<path>[^\s`'\":,]+)" + _Q + r"\s*[:,]?\s*"
    r"replace\s+" + r"(?P<q1>[`'\"]?)(?P<old>.+?)(?P=q1)\s+with\s+(?P<q2>[`'\"]?)(?P<new>.*?)(?P=q2)\s*[.!]?$",
    re.I | re.S,
)
_WRITE = re.compile(
    r"^(?:please\s+)?(?:write|create)\s+(?:the\s+file\s+|a\s+file\s+)?" + _Q + r"(?P<path>[^\s`'\":,]+)" + _Q
    + r"(?:\s*:\s*|\s+(?:with|containing|saying)\s+)(?P<content>.+?)\s*$",
    re.I | re.S,
)


@dataclass(frozen=True)
class FileIntent:
    tool: str  # "Edit" or "Write"
    path: str
    old: str = ""
    new: str = ""


def parse_file_intent(text: str, cwd: str | None) -> FileIntent | None:
    text = text.strip()
    if match := _EDIT.match(text):
        return FileIntent("Edit", absolute(match["path"], cwd), match["old"], match["new"])
    if match := _WRITE.match(text):
        content = match["content"].strip().strip("`")
        return FileIntent("Write", absolute(match["path"], cwd), new=content if content.endswith("\n") else content + "\n")
    return None


def latest_prompt(body: dict[str, Any]) -> tuple[int, str] | None:
    """The index and text of the user's latest typed prompt (not a tool result, not injected text)."""
    history = messages(body)
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if message.get("role") != "user":
            continue
        texts = [
            strip_id_tag(str(b.get("text", "")))
            for b in content_blocks(message.get("content"))
            if b.get("type") == "text" and not is_meta_text(str(b.get("text", "")))
            and not str(b.get("text", "")).lstrip().startswith("<system-reminder>")
        ]
        if texts:
            return index, texts[-1].strip()
    return None


def _calls_since(body: dict[str, Any], start: int) -> list[tuple[Block, Block | None]]:
    """Each tool call after the prompt with its result (None while it has none)."""
    results: dict[str, Block] = {}
    uses: list[Block] = []
    for message in messages(body)[start + 1 :]:
        for block in content_blocks(message.get("content")):
            if block.get("type") == "tool_use":
                uses.append(block)
            elif block.get("type") == "tool_result":
                results[str(block.get("tool_use_id"))] = block
    return [(use, results.get(str(use.get("id")))) for use in uses]


def file_step(body: dict[str, Any], start: int, intent: FileIntent, offered: set[str], key: object) -> Reply:
    """The next move for the file change the prompt asked for."""
    calls = _calls_since(body, start)
    if intent.tool not in offered:
        return Reply([text_block(f"I'd use the {intent.tool} tool for that, but this session doesn't offer it.")])
    done = [(u, r) for u, r in calls if u.get("name") == intent.tool and r is not None]
    if done:
        return Reply([text_block(_report(intent, done[-1][1]))])
    read = [(u, r) for u, r in calls if u.get("name") == "Read" and r is not None]
    needs_read = intent.tool == "Edit" or any(
        r is not None and "has not been read" in text_of(r) for u, r in calls if u.get("name") == intent.tool
    )
    if needs_read and not read:
        return _call(key, "Read", {"file_path": intent.path}, f"Reading `{intent.path}` first.")
    if read and read[-1][1].get("is_error"):
        return Reply([text_block(f"I could not read `{intent.path}`:\n\n{text_of(read[-1][1])}")])
    if intent.tool == "Edit":
        tool_input = {"file_path": intent.path, "old_string": intent.old, "new_string": intent.new}
        return _call(key, "Edit", tool_input, f"Replacing `{intent.old}` with `{intent.new}`.")
    return _call(key, "Write", {"file_path": intent.path, "content": intent.new}, f"Writing `{intent.path}`.")


def _call(key: object, name: str, tool_input: dict[str, Any], say: str) -> Reply:
    block_id = tool_use_id("demo-file", key, name, tool_input)
    return Reply([text_block(say), tool_use_block(block_id, name, tool_input)], "tool_use")


def _report(intent: FileIntent, result: Block) -> str:
    text = text_of(result)
    if result.get("is_error"):
        return f"The {intent.tool} did not happen:\n\n{text}\n\n(Offline demo model.)"
    what = f"replaced `{intent.old}` with `{intent.new}` in" if intent.tool == "Edit" else "wrote"
    return (
        f"Done: I {what} `{intent.path}`; the diff is in the tool block above. "
        "`/rewind` (or Esc twice on an empty input) takes it back. (Offline demo model.)"
    )
