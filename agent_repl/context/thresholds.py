"""The context thresholds as pure functions of numbers (SPEC R3.6.1), so they test without a model.

    effective window     = context window - what a summary reply needs (about 20K)
    autocompact at       = effective window - 13,000
    warning from         = autocompact threshold - 20,000
    blocking limit       = effective window - 3,000 (only enforced when autocompact is off)
"""

from __future__ import annotations

SUMMARY_RESERVE_TOKENS = 20_000
AUTOCOMPACT_BUFFER_TOKENS = 13_000
WARNING_BUFFER_TOKENS = 20_000
BLOCKING_BUFFER_TOKENS = 3_000


def effective_window(context_window: int, max_output_tokens: int = SUMMARY_RESERVE_TOKENS) -> int:
    return context_window - min(max_output_tokens, SUMMARY_RESERVE_TOKENS)


def autocompact_threshold(effective: int) -> int:
    return effective - AUTOCOMPACT_BUFFER_TOKENS


def warning_threshold(effective: int) -> int:
    return autocompact_threshold(effective) - WARNING_BUFFER_TOKENS


def blocking_limit(effective: int) -> int:
    return effective - BLOCKING_BUFFER_TOKENS


def should_autocompact(tokens: int, effective: int, *, enabled: bool = True) -> bool:
    return enabled and tokens >= autocompact_threshold(effective)


def is_at_blocking_limit(tokens: int, effective: int) -> bool:
    return tokens >= blocking_limit(effective)
