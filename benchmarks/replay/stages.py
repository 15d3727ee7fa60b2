"""The small pipeline stages the peer strategies add after `BoundarySlice`.

`ResultReplacements` re-applies the tool results a peer replaced (OpenCode's pruned outputs,
Gemini's truncated ones) to every view; `DropOldestRounds` is the `truncate` strategy.
Both follow the pipeline's stage contract: `apply(view, state)`, no history edits.
"""

from __future__ import annotations

from agent_repl.context.budget import replace_results
from agent_repl.context.estimate import estimate_messages, estimate_request
from agent_repl.context.rounds import index_of
from agent_repl.context.stage import Stage, StageOutcome
from agent_repl.context.state import PipelineState
from agent_repl.context.thresholds import SUMMARY_RESERVE_TOKENS
from agent_repl.core.model.messages import Message, UserMessage

# Aider (aider/history.py): the head is cut so that about half of the budget is left.
TRUNCATE_KEEP_FRACTION = 0.5


class ResultReplacements(Stage):
    """Tool results a peer replaced (OpenCode's pruned outputs, Gemini's truncated ones), applied
    to every view. Copies are kept, so a replaced entry has one identity from turn to turn."""

    name = "replacements"

    def __init__(self) -> None:
        self.replaced: dict[str, str] = {}
        self._copies: dict[str, tuple[Message, Message, int]] = {}

    def apply(self, view: list[Message], state: PipelineState) -> StageOutcome:
        if not self.replaced:
            return StageOutcome(view)
        return StageOutcome([self._copy(m) for m in view])

    def _copy(self, message: Message) -> Message:
        if not isinstance(message, UserMessage) or not message.is_tool_result():
            return message
        hits = sum(b.tool_use_id in self.replaced for b in message.tool_results())
        if not hits:
            return message
        cached = self._copies.get(message.uuid)
        if cached is not None and cached[0] is message and cached[2] == hits:
            return cached[1]
        copy = replace_results(message, self.replaced)
        self._copies[message.uuid] = (message, copy, hits)
        return copy


class DropOldestRounds(Stage):
    """`truncate`: when the request would not fit (window - 20K reserve), whole API rounds go from
    the front (user prompts with them), down to half the limit, as Aider cuts its history head.
    The session's opening context and the current round always stay.

    Unlike the product's stages it keeps what it dropped itself, not in the pipeline state, so a
    dry run would drop for real; the peer sessions never run one (no compactor, memory or hooks)."""

    name = "truncate"

    def __init__(self) -> None:
        self.dropped: set[str] = set()
        self.drops = 0

    def apply(self, view: list[Message], state: PipelineState) -> StageOutcome:
        kept = [m for m in view if m.uuid not in self.dropped] if self.dropped else view
        limit = state.config.context_window - SUMMARY_RESERVE_TOKENS
        tokens = estimate_request(kept, state)
        if tokens <= limit:
            return StageOutcome(kept)
        opening = 1 if kept and isinstance(kept[0], UserMessage) and kept[0].is_meta else 0
        starts = [s for s in index_of(kept, state).round_starts() if s > opening]
        cut = opening
        for start in starts[:-1]:
            cut = start
            if estimate_request([*kept[:opening], *kept[cut:]], state) <= TRUNCATE_KEEP_FRACTION * limit:
                break
        gone = {m.uuid for m in kept[opening:cut]}
        if gone:
            self.dropped |= gone
            self.drops += 1
            # As snip does: the last usage still counts what left, so the next estimate subtracts it.
            state.snip.tokens_freed_since_usage += estimate_messages(kept[opening:cut], state)
        new_view = [m for m in kept if m.uuid not in gone]
        return StageOutcome(new_view, saved_tokens=tokens - estimate_request(new_view, state), items=len(gone))


