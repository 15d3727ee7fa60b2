"""The conversation index: API rounds, tool pairs and wire groups of one view, computed once.

An API round is one streamed reply (the assistant entries sharing a `message_id`, stored one
content block each) together with the tool results that answer it. The rule every stage keeps:
never split a tool pair or one streamed reply. A stage that cuts the view (a collapse span, a
compaction's kept tail, a truncation) cuts only where no round is open (`cuts`): never between
two entries of one reply, nor between a call and any of its results, however they were stored
(parallel calls answered between the reply's later blocks, results out of order or before their
call, an interrupted call with no result). A result whose call is not in the view is an entry of
its own. Snip takes entries out rather than cutting, and keeps only the pair rule: a call leaves
with its results (`pair_closure`), while the reply's text and other calls may stay.

`index_of(view, state)` builds the index once per view list and every stage of a projection
shares it; `ConversationIndex(view)` builds one without pipeline state (the benchmarks).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

if TYPE_CHECKING:
    from agent_repl.context.facts import FactCache
    from agent_repl.context.state import PipelineState


@dataclass
class _ToolCalls:
    # Per entry: the tool_use ids an assistant entry calls, the ones a user entry answers.
    use_ids: list[tuple[str, ...]]
    result_ids: list[tuple[str, ...]]
    # tool_use id -> the entries that call it and the entries that answer it.
    uses_at: dict[str, list[int]]
    results_at: dict[str, list[int]]


def _tool_calls(view: list[Message], facts: FactCache | None) -> _ToolCalls:
    calls = _ToolCalls([], [], {}, {})
    for index, message in enumerate(view):
        uses: tuple[str, ...] = ()
        results: tuple[str, ...] = ()
        if isinstance(message, AssistantMessage):
            uses = (
                tuple(use.id for use in message.tool_uses())
                if facts is None
                else tuple(tool_use_id for tool_use_id, _ in facts.get(message).tool_uses)
            )
        elif isinstance(message, UserMessage):
            results = (
                tuple(result.tool_use_id for result in message.tool_results())
                if facts is None
                else facts.get(message).result_ids
            )
        for tool_use_id in uses:
            calls.uses_at.setdefault(tool_use_id, []).append(index)
        for tool_use_id in results:
            calls.results_at.setdefault(tool_use_id, []).append(index)
        calls.use_ids.append(uses)
        calls.result_ids.append(results)
    return calls


class ConversationIndex:
    """Where each reply, tool_use and tool_result sits in one view (the view is never edited).
    Each part is worked out the first time a question needs it."""

    def __init__(self, view: list[Message], facts: FactCache | None = None) -> None:
        self.view = view
        self.facts = facts  # the pipeline's per-entry facts, when there is a pipeline

    @cached_property
    def _calls(self) -> _ToolCalls:
        return _tool_calls(self.view, self.facts)

    @property
    def uses_at(self) -> dict[str, list[int]]:
        """tool_use id -> the entries that call it (one, unless an id repeats)."""
        return self._calls.uses_at

    @cached_property
    def replies(self) -> dict[str, tuple[int, int]]:
        """message_id -> the first and the last entry of that streamed reply."""
        bounds: dict[str, tuple[int, int]] = {}
        for index, message in enumerate(self.view):
            if isinstance(message, AssistantMessage):
                first = bounds.get(message.message_id, (index, index))[0]
                bounds[message.message_id] = (first, index)
        return bounds

    # --- Tool pairs ------------------------------------------------------------------------

    def result_blocks(self) -> list[tuple[int, ToolResultBlock]]:
        """(entry index, block) of every tool result, in view order."""
        return [
            (index, block)
            for index, ids in enumerate(self._calls.result_ids)
            if ids and isinstance(message := self.view[index], UserMessage)
            for block in message.tool_results()
        ]

    def use_block(self, tool_use_id: str) -> ToolUseBlock | None:
        """The call a tool_use id names (its last entry, should an id repeat)."""
        where = self.uses_at.get(tool_use_id)
        if not where:
            return None
        message = self.view[where[-1]]
        assert isinstance(message, AssistantMessage)
        return next(use for use in message.tool_uses() if use.id == tool_use_id)

    def pair_closure(self, indexes: Iterable[int]) -> set[int]:
        """The entries plus every entry holding the other half of one of their tool calls, transitively."""
        chosen = set(indexes)
        pending = list(chosen)
        while pending:
            index = pending.pop()
            for tool_use_id in self._calls.use_ids[index] + self._calls.result_ids[index]:
                if tool_use_id not in self._calls.uses_at:
                    continue  # an orphan result: no call in the view to keep it with
                for other in self._calls.uses_at[tool_use_id] + self._calls.results_at.get(tool_use_id, []):
                    if other not in chosen:
                        chosen.add(other)
                        pending.append(other)
        return chosen

    def tool_calls_in(self, indexes: Iterable[int]) -> int:
        return sum(len(self._calls.use_ids[i]) for i in indexes)

    def answered_in(self, indexes: Iterable[int]) -> set[str]:
        """The tool_use ids the entries hold results for."""
        return {tool_use_id for i in indexes for tool_use_id in self._calls.result_ids[i]}

    # --- Rounds ----------------------------------------------------------------------------

    @cached_property
    def cuts(self) -> list[int]:
        """Every position `c` (0..len) where the view may be cut: no streamed reply and no tool
        call has entries both before `c` and from `c` on. Between two cuts lies one API round
        (with whatever it encloses) or one entry outside any round (a prompt, a system entry)."""
        calls = self._calls
        # opened[c]: how many rounds have an entry before c and one at or after it, as a difference.
        opened = [0] * (len(self.view) + 2)
        spans = list(self.replies.values())
        for tool_use_id, uses in calls.uses_at.items():
            where = uses + calls.results_at.get(tool_use_id, [])
            spans.append((min(where), max(where)))
        for first, last in spans:
            if last > first:
                opened[first + 1] += 1
                opened[last + 1] -= 1
        cuts, depth = [0], 0
        for position in range(1, len(self.view) + 1):
            depth += opened[position]
            if depth == 0:
                cuts.append(position)
        return cuts

    def segments(self, end: int) -> list[tuple[int, int]]:
        """The smallest runs `[a, b)` of `view[:end]` no round crosses; a run that would reach
        past `end` is not returned, nor anything after it."""
        cuts = self.cuts
        return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b <= end]

    def cut_at_or_before(self, index: int) -> int:
        """The latest cut at or before `index`: where a tail meant to start at `index` must start so
        it holds each round it touches whole."""
        cuts = self.cuts
        return cuts[max(0, bisect_right(cuts, index) - 1)]

    def round_starts(self) -> list[int]:
        """Cuts where a streamed reply begins: where a run of whole API rounds may start."""
        return [c for c in self.cuts if c < len(self.view) and isinstance(self.view[c], AssistantMessage)]

    # --- Turns and wire groups -------------------------------------------------------------

    def latest_prompt_index(self) -> int:
        """Index of the last user prompt (it and what follows are the turn being worked on), or
        the view's length when there is none."""
        for index in range(len(self.view) - 1, -1, -1):
            message = self.view[index]
            if isinstance(message, UserMessage) and not message.is_meta and not message.is_tool_result():
                return index
        return len(self.view)

    def wire_groups(self) -> list[list[int]]:
        """Indexes of the user entries normalization merges into each wire-level user message:
        only a reply closes a group, and a later entry of the same streamed reply does not."""
        groups: list[list[int]] = [[]]
        last_reply: str | None = None
        for index, message in enumerate(self.view):
            if isinstance(message, AssistantMessage):
                if message.message_id != last_reply and groups[-1]:
                    groups.append([])
                last_reply = message.message_id
            elif isinstance(message, UserMessage):
                groups[-1].append(index)
        return [g for g in groups if g]


def index_of(view: list[Message], state: PipelineState) -> ConversationIndex:
    """The index of `view`, built once per projection and shared by every stage that asks."""
    return state.memo("rounds", view, lambda: ConversationIndex(view, state.facts))
