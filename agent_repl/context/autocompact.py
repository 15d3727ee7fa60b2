"""Autocompact's trigger (docs/architecture.md 5.6): whether the loop compacts before this request.

The last of the view's steps and the most destructive, so the cheaper ones before it usually make
it a no-op. It asks for `Compact("auto")` when the view is over the autocompact threshold or, with
the cost-aware trigger, when summarizing now costs less than carrying the context on. Whether
autocompact may run at all is one fact, `config.autocompact_on`: off when the user or the
environment turned it off, when collapse manages the context, and once the breaker has opened
(agent_repl.context.compact runs the compaction itself).
"""

from __future__ import annotations

from agent_repl.context.attachments import reinjection_budget
from agent_repl.context.compact import SUMMARY_MAX_TOKENS, kept_tail_budget
from agent_repl.context.stage import Check
from agent_repl.context.state import PipelineState
from agent_repl.context.thresholds import compaction_pays, should_autocompact
from agent_repl.core.loop.projection import Compact


class Autocompact(Check):
    name = "autocompact"

    def check(self, tokens: int, state: PipelineState) -> Compact | None:
        config = state.config
        if not config.autocompact_on:
            return None
        if should_autocompact(tokens, config.effective_window) or (config.cost_trigger and _pays(tokens, state)):
            return Compact("auto")
        return None


def _pays(tokens: int, state: PipelineState) -> bool:
    """The cost-aware trigger: the requests made so far as the expected remaining ones."""
    config = state.config
    after = round(config.fixed_prompt_cl100k * state.tokens.ratio) + kept_tail_budget(state) + reinjection_budget(
        config.effective_window, config.reinject_share
    )
    summary = min(SUMMARY_MAX_TOKENS, max(2_000, tokens // 50))
    return compaction_pays(
        tokens,
        after + summary,
        summary,
        state.tokens.responses,
        read=config.cache_read_multiplier,
        output=config.output_multiplier,
        margin=config.cost_trigger_margin,
    )
