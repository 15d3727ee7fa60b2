"""The blocking limit (docs/architecture.md 5.8): the last check before the wire.

Only while autocompact is off (with it on, the compaction keeps the view under the limit) and
not under collapse, which recovers through its drain: a request over `effective window - 3,000`
is not sent; the user reads why instead (a synthetic reply, no API call). Skipped when snip freed
tokens the last usage cannot see, and right after a compaction (the loop does not ask then).
"""

from __future__ import annotations

from agent_repl.context.stage import Check
from agent_repl.context.state import PipelineState
from agent_repl.context.thresholds import blocking_limit, is_at_blocking_limit
from agent_repl.core.loop.projection import Block


def blocking_message(tokens: int, limit: int) -> str:
    return (
        f"Prompt is too long: about {tokens:,} tokens, over this model's limit of {limit:,}. "
        "Free some space with /compact or /snip, or start over with /clear."
    )


class BlockingLimit(Check):
    name = "blocking limit"

    def check(self, tokens: int, state: PipelineState) -> Block | None:
        config = state.config
        if config.autocompact_on or config.strategy == "collapse" or state.snip.tokens_freed_since_usage > 0:
            return None
        if not is_at_blocking_limit(tokens, config.effective_window):
            return None
        return Block(blocking_message(tokens, blocking_limit(config.effective_window)))

    def quiet_below(self, state: PipelineState) -> float:
        return blocking_limit(state.config.effective_window)
