"""Checks the reliability tests share: transcripts, request validity, persisted outputs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agent_repl.core.model.messages import AssistantMessage, Message, UserMessage
from agent_repl.core.tooling.persisted_output import PERSISTED_OUTPUT_TAG

_SAVED_TO = re.compile(r"Full output saved to: (.+)")


def transcript_files(home: Path) -> list[Path]:
    return sorted((home / "projects").glob("*/*.jsonl"))


def complete_records(data: bytes) -> list[dict[str, Any]]:
    """The records of every newline-terminated line that parses (a torn last line is left out)."""
    records = []
    for line in data.split(b"\n")[:-1]:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def unanswered_in_request(body: dict[str, Any]) -> list[str]:
    """tool_use ids of a request body that the next message does not answer (the API rejects those)."""
    missing: list[str] = []
    messages = body["messages"]
    for i, message in enumerate(messages):
        if message["role"] != "assistant" or not isinstance(message["content"], list):
            continue
        wanted = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
        following = messages[i + 1]["content"] if i + 1 < len(messages) else []
        answered = {b.get("tool_use_id") for b in following if isinstance(b, dict) and b.get("type") == "tool_result"}
        missing += [w for w in wanted if w not in answered]
    return missing


def unanswered_in_history(messages: list[Message]) -> list[str]:
    """tool_use ids in a stored history with no tool_result anywhere after them."""
    answered: set[str] = set()
    for message in messages:
        if isinstance(message, UserMessage):
            answered.update(r.tool_use_id for r in message.tool_results())
    return [
        b.id for m in messages if isinstance(m, AssistantMessage) for b in m.tool_uses() if b.id not in answered
    ]


def result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict))


def persisted_results(records: list[dict[str, Any]]) -> list[tuple[str, Path, dict[str, Any]]]:
    """(tool_use_id, saved path, toolUseResult) for every stored result that is a persisted preview."""
    found = []
    for record in records:
        if record.get("type") != "user" or not isinstance(record.get("message"), dict):
            continue
        content = record["message"].get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            text = result_text(block.get("content", ""))
            if PERSISTED_OUTPUT_TAG not in text:
                continue
            match = _SAVED_TO.search(text)
            assert match, f"a persisted preview without its path: {text[:200]!r}"
            extra = record.get("toolUseResult")
            found.append((block["tool_use_id"], Path(match.group(1)), extra if isinstance(extra, dict) else {}))
    return found


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink())
