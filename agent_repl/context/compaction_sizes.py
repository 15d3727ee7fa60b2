"""What a compaction is sized by, for the compactor a session holds (agent_repl.context.compactor)
and the compaction it runs (agent_repl.context.compact) alike: the kept tail's budget, the summary's
room, which entries are the user's typed prompts, and what a run needs of its compactor. A leaf, so
that neither of the two imports the other for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeGuard

from agent_repl.context.thresholds import scaled_amount
from agent_repl.core.model.messages import Message, UserMessage

if TYPE_CHECKING:
    from agent_repl.context.projector import Pipeline
    from agent_repl.context.state import PipelineState

KEPT_TAIL_MAX_TOKENS = 40_000
SUMMARY_MAX_TOKENS = 16_000


def is_typed_prompt(message: Message) -> TypeGuard[UserMessage]:
    return (
        isinstance(message, UserMessage)
        and not message.is_meta
        and not message.is_compact_summary
        and not message.is_tool_result()
    )


def kept_tail_budget(state: PipelineState) -> int:
    """`kept_tail_tokens` in a 200K window and larger ones, in proportion in smaller ones.

    Everything kept is written to the cache again after the compaction, and read on every request
    after it; a third of the window (an earlier rule) cost the replay benchmark's 50K sessions more.
    """
    return scaled_amount(state.config.kept_tail_tokens, state.config.effective_window)


class CompactionOwner(Protocol):
    """What one compaction run uses of the compactor that started it (which outlives the run)."""

    pipeline: Pipeline
    summary_max_tokens: int
    summary_output_tokens: int

    def summary_room(self) -> int: ...
