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


def compaction_pays(
    tokens: int,
    after: int,
    summary: int,
    remaining: int,
    *,
    read: float,
    write: float = 1.25,
    output: float = 5.0,
    margin: float = 1.0,
) -> bool:
    """Whether summarizing now costs less than carrying the context for `remaining` more requests.

    Carrying: `remaining` reads of `tokens`. Compacting: one read of `tokens` (the summary
    request), the `summary` written at the output price, the new context (`after` tokens) written
    once, then read by the rest. Prices are relative to base input; the saving must be `margin`
    times the cost."""
    if remaining < 2 or after >= tokens:
        return False
    saved = (remaining - 1) * read * (tokens - after)
    return saved > margin * (output * summary + write * after)
