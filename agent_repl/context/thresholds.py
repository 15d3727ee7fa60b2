"""The context thresholds as pure functions of numbers (docs/architecture.md 5.6), so they test without a model.

    effective window     = context window - what a summary reply needs (about 20K)
    autocompact at       = effective window - 13,000
    warning from         = autocompact threshold - 20,000
    blocking limit       = effective window - 3,000 (only enforced when autocompact is off)

The base amounts are for a 200K window (an effective window of 180K). A smaller window scales
them down in proportion, so it compacts at the same share of the window (83.5%) instead of
much earlier: with fixed amounts a 50K window would compact at 17K tokens, a third of it, and
pay for a new cached prefix several times as often (measured by the replay benchmark,
BENCHMARKS.md). Larger windows keep the fixed amounts. The tool-result budget scales the same way.
"""

from __future__ import annotations

import math

SUMMARY_RESERVE_TOKENS = 20_000
AUTOCOMPACT_BUFFER_TOKENS = 13_000
BLOCKING_BUFFER_TOKENS = 3_000
# The tool results of one wire-level user message.
TOOL_RESULT_BUDGET_CHARS = 200_000
# The window the amounts above are meant for, and its effective window.
REFERENCE_WINDOW = 200_000
REFERENCE_EFFECTIVE_WINDOW = REFERENCE_WINDOW - SUMMARY_RESERVE_TOKENS


def _scaled(amount: int, size: int, reference: int) -> int:
    return amount if size >= reference else round(amount * size / reference)


def scaled_amount(amount: int, effective: int) -> int:
    """An amount given for a 200K window, for a window with this effective size."""
    return _scaled(amount, effective, REFERENCE_EFFECTIVE_WINDOW)


def effective_window(context_window: int, max_output_tokens: int = SUMMARY_RESERVE_TOKENS) -> int:
    return context_window - min(max_output_tokens, _scaled(SUMMARY_RESERVE_TOKENS, context_window, REFERENCE_WINDOW))


def autocompact_threshold(effective: int) -> int:
    return effective - _scaled(AUTOCOMPACT_BUFFER_TOKENS, effective, REFERENCE_EFFECTIVE_WINDOW)


def blocking_limit(effective: int) -> int:
    return effective - _scaled(BLOCKING_BUFFER_TOKENS, effective, REFERENCE_EFFECTIVE_WINDOW)


def tool_result_budget_chars(effective: int) -> int:
    """200,000 characters (about 50K tokens) in a 200K window, in proportion in a smaller one: a
    50K window could not take a 200,000-character message at all."""
    return _scaled(TOOL_RESULT_BUDGET_CHARS, effective, REFERENCE_EFFECTIVE_WINDOW)


def should_autocompact(tokens: int, effective: int) -> bool:
    return tokens >= autocompact_threshold(effective)


def is_at_blocking_limit(tokens: int, effective: int) -> bool:
    return tokens >= blocking_limit(effective)


def compaction_cost(tokens: int, after: int, fixed: int, summary: int, *, read: float, write: float, output: float) -> float:
    """What one compaction costs beyond carrying on, in base-input units: the summary request reads
    the `tokens` of the old view, its `summary` is written at the output price, and the first
    request after it writes the new view's messages (`after` minus the `fixed` system prompt and
    tools, which stay cached) at the cache-write price instead of reading them."""
    return read * tokens + output * summary + (write - read) * max(0, after - fixed)


def requests_before_threshold(tokens: int, threshold: int, growth: float) -> float:
    """The main requests until the view, growing by `growth` tokens a request, reaches the threshold."""
    return max(0.0, (threshold - tokens) / max(growth, 1.0))


def expected_requests(made: int, horizon: float) -> float:
    """The requests among the next `horizon` that are expected to be made, in a session that has
    made `made` so far.

    A session that has run n requests is still running j requests later with odds n / (n + j) (the
    assumption that puts the median of what is left at n more, which the trigger made before it
    had a horizon); summed over the horizon that is about n * ln(1 + horizon / n), never more than
    the horizon and small early in a session, when nothing says it will go on."""
    if made <= 0 or horizon <= 0:
        return 0.0
    return min(horizon, made * math.log1p(horizon / made))


def regrowth_needed(cost: float, growth: float, *, read: float, margin: float) -> float:
    """How far the view must grow past a compaction's size before another one can pay.

    Compacting every D tokens of growth, a request reads on average D / 2 above the compacted size
    and pays one compaction every D / growth requests: read * D / 2 + margin * cost * growth / D a
    request, least at D = sqrt(2 * margin * cost * growth / read). Compacting sooner than that
    after the last compaction costs more than it saves, however long the session goes on: this is
    the hysteresis that keeps the cost-aware trigger from firing again right after a compaction."""
    if read <= 0:
        return math.inf
    return math.sqrt(2 * margin * cost * max(growth, 0.0) / read)


def compaction_pays(tokens: int, after: int, cost: float, requests: float, *, read: float, margin: float = 1.0) -> bool:
    """Whether compacting now saves `margin` times what it costs.

    Carrying on, each of the `requests` expected before the threshold reads `tokens`; compacted,
    it reads `after` (the compaction's own rewrite is in `cost`). The saving stops at the
    threshold: there the view is compacted anyway, so a compaction now buys only the reads
    between now and then, and is counted as an extra compaction in full."""
    if after >= tokens or requests <= 0:
        return False
    return requests * read * (tokens - after) > margin * cost
