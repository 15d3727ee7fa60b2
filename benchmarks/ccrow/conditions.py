"""The summary conditions: who writes the summaries both agents receive.

`realistic` (the acceptance condition) and `lossy` come from the replay benchmark's summarizers
(`benchmarks.replay.summarizers.summarizer_for`) when that module is present. Without it,
`realistic` is the emulator's extractive nine-section summary and `lossy` a summary that keeps
nothing verbatim (counts only), so the row still runs.
"""

from __future__ import annotations

import importlib
from typing import Any

from agent_repl.emulator.policies.summary import RequestKind, Summarizer
from agent_repl.offline.summary import AgentSummarizer

CONDITIONS = ("realistic", "lossy")


class CountingSummarizer:
    """Keeps nothing verbatim: how many messages and tool calls there were, nothing they said."""

    def _text(self, body: dict[str, Any]) -> str:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        calls = 0
        for message in messages:
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            calls += sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use")
        return f"<summary>\nA session of {len(messages)} messages and {calls} tool calls; details were not kept.\n</summary>"

    def summary(self, body: dict[str, Any], kind: RequestKind) -> str:
        return self._text(body)

    def compaction(self, body: dict[str, Any], instructions: str | None) -> str:
        return self._text(body)


def summarizer_for(condition: str) -> Summarizer:
    if condition not in CONDITIONS:
        raise ValueError(f"unknown summary condition {condition!r}: one of {', '.join(CONDITIONS)}")
    try:
        shared = importlib.import_module("benchmarks.replay.summarizers")
    except ModuleNotFoundError:
        return AgentSummarizer() if condition == "realistic" else CountingSummarizer()
    made: Summarizer = shared.summarizer_for(condition)
    return made


def source_of(condition: str) -> str:
    """Where the condition's summaries come from, for the report."""
    try:
        importlib.import_module("benchmarks.replay.summarizers")
    except ModuleNotFoundError:
        return "fallback (`benchmarks/ccrow/conditions.py`)"
    return "`benchmarks/replay/summarizers.py`"
