"""Autocompact's trigger (docs/architecture.md 5.6): whether the loop compacts before this request.

The last of the view's steps and the most destructive, so the cheaper ones before it usually make
it a no-op. It asks for `Compact("auto")` when the view is over the autocompact threshold or, with
the cost-aware trigger, when summarizing now costs less than carrying the context on. Whether
autocompact may run at all is one fact, `config.autocompact_on`: off when the user or the
environment turned it off, when collapse manages the context, and once the breaker has opened
(agent_repl.context.compact runs the compaction itself).

The cost-aware trigger, in base-input units (agent_repl.context.thresholds has the formulas):

- What a compaction costs: the summary request reads the whole view; the summary is written at
  the output price, sized like a real one (the last summary's output tokens when this session has
  had one, else `SUMMARY_OUTPUT_ESTIMATE` or a fiftieth of the view, whichever is more); the
  first request after it writes the new view at the cache-write price (2x where the hour lifetime
  is used). The new view is the size the last compaction left, or, before any, the system prompt
  and tools, the summary, the kept tail and the budgets of what is put back (files, skills, todo
  list and plan share one; the user's messages another).
- When compacting early can pay at all: compactions every D tokens of growth cost, per request,
  the reads of D / 2 on average plus a compaction every D / growth requests. The spacing that
  costs least, with each compaction priced at `cost_trigger_margin` times its cost for the detail
  a summary loses, is `thresholds.regrowth_needed`; the view must have grown that much since the
  last compaction (or the start) before the trigger fires. That is the hysteresis: right after a
  compaction the view has not grown, so it never compacts again at once (the old trigger, which
  took as many requests to come as were made, did, seven times in a 200K session against the real
  CLI's two). When that spacing is more than the room under the threshold, only the threshold fires.
- Whether this compaction pays for itself before the threshold: a single compaction now buys only
  the reads of what leaves the view until the threshold would have compacted anyway; it is counted
  as one compaction more, in full. Those requests are the ones the view's growth leaves before the
  threshold, each weighted by the odds that the session goes on that long
  (`thresholds.expected_requests`), never more; if the session ends before them, only they repay it.
  This guard is at the bare price: the margin is already in the spacing.
"""

from __future__ import annotations

import math

from agent_repl.context.attachments import reinjection_budget
from agent_repl.context.compaction_sizes import SUMMARY_MAX_TOKENS, kept_tail_budget
from agent_repl.context.estimate import fixed_prompt_cl100k
from agent_repl.context.stage import Check
from agent_repl.context.state import PipelineState
from agent_repl.context.thresholds import (
    REFERENCE_EFFECTIVE_WINDOW,
    autocompact_threshold,
    compaction_cost,
    compaction_pays,
    expected_requests,
    regrowth_needed,
    requests_before_threshold,
    should_autocompact,
)
from agent_repl.context.user_messages import user_messages_budget
from agent_repl.contract import CACHE_WRITE_1H_MULTIPLIER, CACHE_WRITE_5M_MULTIPLIER
from agent_repl.core.loop.projection import Compact

# A summary's output when the session has had none: real summaries of a full 200K view run
# 12-16K characters, with the model's notes before them, about 4K output tokens.
SUMMARY_OUTPUT_ESTIMATE = 4_000


class Autocompact(Check):
    name = "autocompact"

    def check(self, tokens: int, state: PipelineState) -> Compact | None:
        config = state.config
        if not config.autocompact_on:
            return None
        if should_autocompact(tokens, config.effective_window) or (config.cost_trigger and _pays(tokens, state)):
            return Compact("auto")
        return None

    def quiet_below(self, state: PipelineState) -> float:
        config = state.config
        if not config.autocompact_on:
            return math.inf
        threshold = autocompact_threshold(config.effective_window)
        return min(threshold, pays_floor(state)) if config.cost_trigger else threshold


def summary_output_estimate(tokens: int, state: PipelineState) -> int:
    """The output tokens the next summary is expected to take."""
    last = state.compaction.last
    if last is not None and last.summary_output_tokens:
        return last.summary_output_tokens
    return max(SUMMARY_OUTPUT_ESTIMATE, min(SUMMARY_MAX_TOKENS, tokens // 50))


def after_estimate(summary: int, state: PipelineState) -> int:
    """The view's size right after a compaction: what the last one left, else its parts' budgets."""
    last = state.compaction.last
    if last is not None and last.after_tokens is not None:
        return last.after_tokens
    return _fixed(state) + _put_back(summary, state)


def _put_back(summary: int, state: PipelineState) -> int:
    """What a compaction leaves besides the system prompt and tools: the summary and the budgets
    of what it puts back."""
    config = state.config
    # What is put back is what was read and typed lately, which does not grow with the window: past
    # a 200K window its budgets are caps far above it (at 1M the replay benchmark's first
    # compactions put back 26-35K tokens besides the system prompt and the summary, not 108K).
    effective = min(config.effective_window, REFERENCE_EFFECTIVE_WINDOW)
    return (
        summary
        + kept_tail_budget(state)
        + reinjection_budget(effective, config.reinject_share)
        + user_messages_budget(effective, config.user_messages_share)
    )


def pays_floor(state: PipelineState) -> float:
    """A token count under which `_pays` is False whatever the texts count: a compaction pays only
    on more tokens than it leaves (`compaction_pays`), and `after_estimate` is never below this
    (its system prompt and tools count at least 0, its summary at least the estimate's floor)."""
    last = state.compaction.last
    if last is not None and last.after_tokens is None:
        return math.inf
    if last is not None and last.after_tokens is not None:
        return last.after_tokens
    summary = last.summary_output_tokens if last is not None and last.summary_output_tokens else SUMMARY_OUTPUT_ESTIMATE
    return _put_back(summary, state)


def growth_per_request(tokens: int, state: PipelineState) -> float:
    """How much the view grew a request since the last compaction (or since the session began)."""
    last = state.compaction.last
    if last is not None and last.after_tokens is not None:
        return (tokens - last.after_tokens) / max(1, last.responses_since)
    return (tokens - _fixed(state)) / max(1, state.tokens.responses)


def _fixed(state: PipelineState) -> int:
    return round(fixed_prompt_cl100k(state) * state.tokens.ratio)


def cache_write_multiplier(state: PipelineState) -> float:
    config = state.config
    hour = config.cache_ttl in ("1h", "prefix-1h") or (config.cache_ttl == "auto" and bool(state.pauses.pauses))
    return CACHE_WRITE_1H_MULTIPLIER if hour else CACHE_WRITE_5M_MULTIPLIER


def _pays(tokens: int, state: PipelineState) -> bool:
    config = state.config
    last = state.compaction.last
    if last is not None and last.after_tokens is None:
        return False  # compacted, and not one reply since
    summary = summary_output_estimate(tokens, state)
    after = after_estimate(summary, state)
    read = config.cache_read_multiplier
    cost = compaction_cost(
        tokens, after, _fixed(state), summary, read=read, write=cache_write_multiplier(state), output=config.output_multiplier
    )
    growth = growth_per_request(tokens, state)
    if tokens - after < regrowth_needed(cost, growth, read=read, margin=config.cost_trigger_margin):
        return False
    horizon = requests_before_threshold(tokens, autocompact_threshold(config.effective_window), growth)
    requests = expected_requests(state.tokens.responses, horizon)
    return compaction_pays(tokens, after, cost, requests, read=read)
