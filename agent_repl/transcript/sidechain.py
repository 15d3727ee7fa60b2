"""Sub-agents' sidechain transcripts, found as Claude Code lays them out.

    <session>.jsonl                               the main conversation
    <session>/subagents/agent-<id>.jsonl          one sub-agent (isSidechain, agentId)
    <session>/subagents/agent-<id>.meta.json      {"toolUseId": the Task call that started it, ...}
    agent-<id>.jsonl beside <session>.jsonl       the layout before Claude Code 2.1

A sub-agent is linked to its Task call by its meta file, or, without one, by the `agentId` of the
call's structured result (`toolUseResult`). The compaction call's own file (`agent-acompact-*`)
is no sub-agent of a call and is never linked.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from agent_repl.core.model.messages import Message, UserMessage
from agent_repl.transcript.loader import load_session
from agent_repl.transcript.paths import ensure_private_dir, write_private_text


def subagents_dir(transcript: Path) -> Path:
    return transcript.with_suffix("") / "subagents"


def _meta_links(directory: Path) -> dict[str, str]:
    """{Task call id: agent id} from the meta files."""
    links: dict[str, str] = {}
    for path in sorted(directory.glob("agent-*.meta.json")) if directory.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        tool_use_id = data.get("toolUseId") if isinstance(data, dict) else None
        if isinstance(tool_use_id, str) and tool_use_id:
            links[tool_use_id] = path.name.removeprefix("agent-").removesuffix(".meta.json")
    return links


def _result_links(history: list[Message]) -> dict[str, str]:
    """{Task call id: agent id} from the calls' structured results."""
    links: dict[str, str] = {}
    for message in history:
        structured = message.tool_use_result if isinstance(message, UserMessage) else None
        agent_id = structured.get("agentId") if isinstance(structured, dict) else None
        results = message.tool_results() if isinstance(message, UserMessage) else []
        if isinstance(agent_id, str) and agent_id and results:
            links[results[0].tool_use_id] = agent_id
    return links


def subagent_histories(transcript: Path, history: list[Message]) -> dict[str, list[Message]]:
    """By Task call id, the history of the sub-agent it started (calls whose file is gone are left out)."""
    directory = subagents_dir(transcript)
    links = {**_result_links(history), **_meta_links(directory)}
    found: dict[str, list[Message]] = {}
    for tool_use_id, agent_id in links.items():
        if "/" in agent_id or agent_id.startswith("."):
            continue
        for path in (directory / f"agent-{agent_id}.jsonl", transcript.parent / f"agent-{agent_id}.jsonl"):
            if path.is_file():
                try:
                    found[tool_use_id] = load_session(path).messages
                except OSError:
                    pass
                break
    return found


def copy_subagents(source: Path, target: Path, history: list[Message], redact: Callable[[str], str]) -> None:
    """A forked session keeps its sub-agents' files (its Task results name them by agent id), with
    credentials taken out as from the rest of the copy; regular files only."""
    origin, copy = subagents_dir(source), subagents_dir(target)
    # Links are not followed (a prepared folder could name any file of the user's).
    real = not origin.is_symlink() and not origin.parent.is_symlink() and origin.is_dir()
    files = sorted(origin.glob("agent-*")) if real else []
    for agent_id in _result_links(history).values():
        legacy = source.parent / f"agent-{agent_id}.jsonl"
        if legacy.is_file() and "/" not in agent_id:
            files.append(legacy)
    for path in files:
        if path.is_symlink() or not path.is_file() or path.name.startswith("agent-acompact"):
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        ensure_private_dir(copy)
        write_private_text(copy / path.name, redact(text))
