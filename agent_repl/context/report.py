"""The data behind `/context`: where the tokens go, costing zero model tokens.

It runs the same projection the next request will (dry run: nothing written, nothing changed),
so the numbers shown are the numbers the API will see.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agent_repl.context.estimate import estimate_messages, text_cl100k
from agent_repl.context.ids import short_id
from agent_repl.context.projector import Pipeline
from agent_repl.context.thresholds import autocompact_threshold
from agent_repl.core.loop.projection import Projection, StageReport
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    UserMessage,
)
from agent_repl.core.tooling.persisted_output import is_persisted_preview

if TYPE_CHECKING:
    from agent_repl.context.context_session import ContextSession

CATEGORIES = (
    "System prompt",
    "Tools",
    "Memory and context",
    "Messages",
    "Tool results",
    "Persisted previews",
    "Autocompact buffer",
    "Free space",
)


@dataclass(frozen=True)
class ContextItem:
    """One history entry in the view: its `[id:]` (user entries), role, size and first line."""

    id: str
    role: str
    tokens: int
    first_line: str


@dataclass
class ContextReport:
    model: str
    context_window: int
    effective_window: int
    used_tokens: int
    categories: dict[str, int]
    largest: list[ContextItem]
    stages: list[StageReport] = field(default_factory=list)
    view_messages: int = 0
    history_messages: int = 0

    @property
    def used_share(self) -> float:
        return self.used_tokens / self.context_window if self.context_window else 0.0


def _first_line(message: Message) -> str:
    if isinstance(message, AssistantMessage):
        block = message.content[0] if message.content else None
        if block is None:
            return ""
        if block.type == "tool_use":
            return f"{block.name}({json.dumps(block.input, ensure_ascii=False)})"[:100]
        text = block.text if isinstance(block, TextBlock) else block.thinking if isinstance(block, ThinkingBlock) else ""
    elif isinstance(message, UserMessage):
        results = message.tool_results()
        text = results[0].text() if results else message.text()
    else:
        text = message.content
    return (text.strip().splitlines() or [""])[0][:100]


def _item(message: Message, tokens: int) -> ContextItem:
    if isinstance(message, UserMessage):
        role = "tool result" if message.is_tool_result() else ("meta" if message.is_meta else "user")
        ident = "" if message.is_meta else short_id(message.uuid)
    else:
        role, ident = "assistant", ""
    return ContextItem(ident, role, tokens, _first_line(message))


@dataclass(frozen=True)
class ContextUsage:
    """How full the next request's view is: the one figure the status line and /context both show."""

    used_tokens: int
    context_window: int
    effective_window: int


def _dry_run(session: ContextSession) -> tuple[Pipeline, Projection]:
    projector = session.projector
    if not isinstance(projector, Pipeline):
        raise TypeError("the context figures need the context pipeline")
    return projector, projector.project(session.messages, dry_run=True)


def context_usage(session: ContextSession) -> ContextUsage:
    """The next request's estimated size, from the same dry-run projection /context uses."""
    projector, projection = _dry_run(session)
    config = projector.state.config
    return ContextUsage(projection.estimated_tokens, config.context_window, config.effective_window)


def _scale_to(categories: dict[str, int], total: int) -> None:
    """Scale the counted rows so they add up to `total` (rounding settled on the largest row)."""
    counted = sum(categories.values())
    if counted <= 0:
        categories["Messages"] = total
        return
    for name, tokens in categories.items():
        categories[name] = round(tokens * total / counted)
    largest = max(categories, key=lambda name: categories[name])
    categories[largest] += total - sum(categories.values())


def build_context_report(session: ContextSession, *, largest: int = 10) -> ContextReport:
    projector, projection = _dry_run(session)
    state = projector.state
    ratio = state.tokens.ratio
    categories = dict.fromkeys(CATEGORIES, 0)
    categories["System prompt"] = round(text_cl100k(session.system_prompt, state) * ratio)
    # Deferred definitions stay out of the model's context until ToolSearch loads them.
    loaded = [t for t in session.definitions_for(projection.loaded_tools) if not t.get("defer_loading")]
    categories["Tools"] = round(text_cl100k(json.dumps(loaded), state) * ratio)
    items: list[ContextItem] = []
    for message in projection.view:
        if isinstance(message, SystemMessage):
            continue
        tokens = estimate_messages([message], state)
        if isinstance(message, UserMessage) and message.is_meta:
            categories["Memory and context"] += tokens
        elif isinstance(message, UserMessage) and message.is_tool_result():
            results: list[ToolResultBlock] = message.tool_results()
            key = "Persisted previews" if all(is_persisted_preview(r.text()) for r in results) else "Tool results"
            categories[key] += tokens
        else:
            categories["Messages"] += tokens
        items.append(_item(message, tokens))
    config = state.config
    # The header's figure is the projection's estimate (the status line's too); the rows are each
    # part's share of it, measured in cl100k counts.
    used = projection.estimated_tokens
    _scale_to(categories, used)
    categories["Autocompact buffer"] = config.context_window - autocompact_threshold(config.effective_window)
    categories["Free space"] = max(0, config.context_window - used - categories["Autocompact buffer"])
    return ContextReport(
        model=session.model,
        context_window=config.context_window,
        effective_window=config.effective_window,
        used_tokens=used,
        categories=categories,
        largest=sorted(items, key=lambda i: i.tokens, reverse=True)[:largest],
        stages=projection.reports,
        view_messages=len(projection.view),
        # A resumed session counts the entries it left in the transcript too.
        history_messages=getattr(session, "history_length", len(session.messages)),
    )
