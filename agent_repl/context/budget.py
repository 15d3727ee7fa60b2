"""Tool-result budget (docs/architecture.md 5.2): content replacement, not compaction.

The tool results of one wire-level user message may total at most `tool_result_budget_chars`
(200,000 in a 200K window, less in a smaller one: `thresholds.tool_result_budget_chars`).
Results are grouped exactly as normalization merges them: only an assistant reply closes a
group, and a repeated `message_id` (one streamed reply split into entries) does not. Each
result is in one of three partitions, by tool_use_id:

- must_reapply: replaced before; the recorded replacement string is re-emitted byte for byte;
- frozen: seen before and not replaced; never touched again, so the cached prefix stays put;
- fresh: first seen now; the only candidates, largest first, until frozen + fresh fit.

If the frozen results alone are over the budget, the overage is accepted: later stages deal
with it. A replacement writes the full text to the session's tool-results directory and keeps
a preview in the view; the record holds the exact string, so a resume re-emits it unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from agent_repl.context.estimate import text_cl100k
from agent_repl.context.rounds import index_of
from agent_repl.context.stage import Stage, StageOutcome
from agent_repl.context.state import PipelineState
from agent_repl.core.model.messages import AssistantMessage, Message, ToolResultBlock, UserMessage
from agent_repl.core.tooling.persisted_output import (
    PREVIEW_SIZE_BYTES,
    build_preview,
    is_persisted_preview,
    persist_text,
    tool_result_path,
)
from agent_repl.transcript.records import ContentReplacementRecord


def tool_names(view: list[Message], state: PipelineState) -> dict[str, str]:
    """tool_use_id -> tool name for every call in the view (and earlier ones: a superset is fine)."""
    facts = state.facts
    for message in view:
        if isinstance(message, AssistantMessage):
            facts.get(message)
    return facts.tool_names


def replace_results(message: UserMessage, replacements: dict[str, str]) -> UserMessage:
    """A copy of `message` whose named tool results carry their replacement text."""
    blocks = [
        b.model_copy(update={"content": replacements[b.tool_use_id]})
        if isinstance(b, ToolResultBlock) and b.tool_use_id in replacements
        else b
        for b in message.blocks()
    ]
    return message.model_copy(update={"content": blocks})


@dataclass
class _Candidate:
    index: int
    block: ToolResultBlock
    size: int


class ToolResultBudget(Stage):
    name = "budget"

    def __init__(self, tool_results_dir: Path) -> None:
        self.tool_results_dir = tool_results_dir

    def _preview_for(self, block: ToolResultBlock) -> str:
        """The preview `persist_text` writes beside the full text (the write is the outcome's effect)."""
        data = block.text().encode("utf-8", errors="surrogateescape")
        path = tool_result_path(self.tool_results_dir, block.tool_use_id)
        return build_preview(data[: PREVIEW_SIZE_BYTES + 1], len(data), path)

    def apply(self, view: list[Message], state: PipelineState) -> StageOutcome:
        """Replacements are records; which results were measured (`seen`) is bookkeeping."""
        config, budget = state.config, state.budget
        names = tool_names(view, state)
        replacements: dict[str, str] = {}
        records: list[object] = []
        effects: list[Callable[[], object]] = []
        newly_seen: set[str] = set()
        saved = 0
        for group in index_of(view, state).wire_groups():
            frozen: list[ToolResultBlock] = []
            fresh: list[_Candidate] = []
            for index in group:
                message = view[index]
                assert isinstance(message, UserMessage)
                for block in message.tool_results():
                    tool_use_id = block.tool_use_id
                    if tool_use_id in budget.replacements:
                        replacements[tool_use_id] = budget.replacements[tool_use_id]
                        continue
                    if tool_use_id in budget.seen:
                        frozen.append(block)
                        continue
                    newly_seen.add(tool_use_id)
                    eligible = (
                        not block.has_image()
                        and not is_persisted_preview(block.text())
                        and (names.get(tool_use_id) not in config.unlimited_tools or not config.unlimited_tools_exempt)
                    )
                    if eligible:
                        fresh.append(_Candidate(index, block, len(block.text())))
                    else:
                        frozen.append(block)
            if not fresh:
                continue  # only results already decided: nothing to measure
            frozen_size = sum(len(block.text()) for block in frozen)
            remaining = sum(c.size for c in fresh)
            for candidate in sorted(fresh, key=lambda c: c.size, reverse=True):
                if frozen_size + remaining <= config.tool_result_budget_chars:
                    break
                block = candidate.block
                preview = self._preview_for(block)
                effects.append(partial(persist_text, block.text(), block.tool_use_id, self.tool_results_dir))
                replacements[block.tool_use_id] = preview
                remaining -= candidate.size
                saved += text_cl100k(block.text(), state) - text_cl100k(preview, state)
                records.append(ContentReplacementRecord(tool_use_id=block.tool_use_id, replacement=preview))
        budget.seen |= newly_seen
        new_view = view
        if replacements:
            new_view = [
                replace_results(m, replacements)
                if isinstance(m, UserMessage) and any(b.tool_use_id in replacements for b in m.tool_results())
                else m
                for m in view
            ]
        return StageOutcome(
            new_view,
            saved_tokens=round(saved * state.tokens.ratio),
            items=len(records),
            detail=f"{len(records)} new replacements, {len(replacements) - len(records)} re-applied",
            records=records,
            effects=effects,
        )
