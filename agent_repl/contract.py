"""What the agent and the local emulator must agree on, and nothing else.

The emulator (agent_repl.emulator) imports nothing of the agent but this module: the markers
that open the agent's summary and memory requests (so the offline models know what they are
asked), and the model facts both sides use (each model's window, output cap, prices, thinking
default, tokenizer ratio), so the emulator serves the models the agent knows, counts tokens the
way the agent estimates them and meters cost the way the agent reports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The agent opens its compaction request with this marker and its session-memory request with
# the second; a continued session's first message starts with the prefix.
SUMMARY_REQUEST_MARKER = "<summary-request>"
MEMORY_REQUEST_MARKER = "<session-memory-request>"
CONTINUATION_PREFIX = "This session is being continued from a previous conversation"

# Claude's tokenizer gives about 1.07x cl100k on prose, code, JSON and shell output
# (../shared/data/tokenizer_samples/RESULTS.json); the session refines this from real usage.
DEFAULT_CLAUDE_RATIO = 1.07
# Claude 4.7 and later models use a newer tokenizer: "the same text counts as approximately 30%
# more tokens" (platform.claude.com, models/haiku-5-5/overview, read 2026-12-04).
NEW_TOKENIZER_RATIO = round(DEFAULT_CLAUDE_RATIO * 1.3, 2)

# Cache writes cost these multiples of the input price (5-minute and 1-hour lifetimes).
CACHE_WRITE_5M_MULTIPLIER = 1.25
CACHE_WRITE_1H_MULTIPLIER = 2.0


@dataclass(frozen=True)
class LongPromptPrice:
    """A higher rate for the whole request (output included) once its prompt (input, cache reads
    and cache writes) is over `threshold_tokens`; cache rates keep their multiples of input."""

    threshold_tokens: int
    input_usd: float
    output_usd: float


@dataclass(frozen=True)
class ModelInfo:
    context_window: int
    max_output_tokens: int
    # None: no published price (the cost shows as unknown).
    input_usd: float | None
    output_usd: float | None
    cache_read_multiplier: float = 0.1
    # Whether the model thinks when a request sends no `thinking` field.
    thinking_default_on: bool = False
    # Accepts the API's on-demand compaction (beta compact-2026-09-04).
    on_demand_compaction: bool = False
    # cl100k tokens times this is the first estimate of the model's own count (agent_repl.core.model.tokens).
    token_ratio: float = DEFAULT_CLAUDE_RATIO
    long_prompt: LongPromptPrice | None = None

    @property
    def output_multiplier(self) -> float:
        """The output price relative to base input (5 when the price is unknown)."""
        if self.input_usd and self.output_usd is not None:
            return self.output_usd / self.input_usd
        return 5.0


def _current(input_usd: float | None, output_usd: float | None, cache_read: float = 0.1, **fields: Any) -> ModelInfo:
    """A 1M-window, 128K-output model on the newer tokenizer that thinks by default."""
    facts: dict[str, Any] = {"thinking_default_on": True, "token_ratio": NEW_TOKENIZER_RATIO, **fields}
    return ModelInfo(1_000_000, 128_000, input_usd, output_usd, cache_read, **facts)


# Prices: the pricing page (platform.claude.com/docs/en/about-claude/pricing) and each model's
# overview page (platform.claude.com/docs/en/models/<model>/overview), read 2026-12-04. Windows,
# output caps and thinking defaults: the same overview pages; the models API overrides them.
_MODELS: dict[str, ModelInfo] = {
    # Cache reads at 0.025x: $0.25 against $10 input.
    "claude-fable-5-1": _current(10.0, 50.0, 0.025),
    "claude-mythos-5-1": _current(10.0, 50.0, 0.025),
    # Cache reads at $0.20 against $4 input (0.05x).
    "claude-opus-5-5": _current(4.0, 20.0, 0.05, on_demand_compaction=True),
    # The reference calls Sonnet 5.5's read multiplier uncertain (its page says $0.20, 0.1x).
    "claude-sonnet-5-5": _current(2.0, 10.0, on_demand_compaction=True),
    # $0.10/$0.50 for prompts up to 100,000 tokens, $0.50/$2.50 over (models/haiku-5-5/overview).
    "claude-haiku-5-5": _current(
        0.10, 0.50, on_demand_compaction=True, long_prompt=LongPromptPrice(100_000, 0.50, 2.50)
    ),
    "claude-fable-5": _current(10.0, 50.0),
    "claude-mythos-5": _current(10.0, 50.0),
    "claude-opus-5": _current(5.0, 25.0, on_demand_compaction=True),
    "claude-sonnet-5": _current(2.0, 10.0, on_demand_compaction=True),
    # Adaptive thinking only, off unless asked for.
    "claude-opus-4-8": _current(5.0, 25.0, thinking_default_on=False),
    "claude-opus-4-7": _current(5.0, 25.0, thinking_default_on=False),
    # Invitation only; the pricing page lists no price for it, so its cost is unknown. The docs do
    # not say which tokenizer it uses (it came before Opus 4.7): the older ratio, corrected by usage.
    "claude-mythos-preview": _current(None, None, token_ratio=DEFAULT_CLAUDE_RATIO),
    "claude-sonnet-4-6": ModelInfo(1_000_000, 128_000, 3.0, 15.0, on_demand_compaction=True),
    "claude-opus-4-6": ModelInfo(1_000_000, 128_000, 5.0, 25.0, on_demand_compaction=True),
    "claude-sonnet-4-5": ModelInfo(200_000, 64_000, 3.0, 15.0),
    "claude-opus-4-5": ModelInfo(200_000, 64_000, 5.0, 25.0),
    "claude-haiku-4-5": ModelInfo(200_000, 64_000, 1.0, 5.0),
}


def table_models() -> list[str]:
    """Every model id of the built-in table, newest lines first."""
    return list(_MODELS)


def known_model_info(model: str) -> ModelInfo | None:
    """The built-in facts by id or dated alias (`claude-sonnet-4-5-20250929`), or None."""
    if model in _MODELS:
        return _MODELS[model]
    for known, info in _MODELS.items():
        suffix = model[len(known) + 1 :]
        if model.startswith(known + "-") and len(suffix) == 8 and suffix.isdigit():
            return info
    return None


def price_usd(
    *,
    input_tokens: int,
    cache_write_5m_tokens: int,
    cache_write_1h_tokens: int,
    cache_read_tokens: int,
    output_tokens: int,
    input_usd: float,
    output_usd: float,
    cache_read_multiplier: float,
    cache_write_5m_multiplier: float = CACHE_WRITE_5M_MULTIPLIER,
    cache_write_1h_multiplier: float = CACHE_WRITE_1H_MULTIPLIER,
) -> float:
    """The price of a request's tokens (USD per million): cache writes and reads at their multiples
    of the input price (the agent's cost figure and the emulator's meter both use it)."""
    input_units = (
        input_tokens
        + cache_write_5m_multiplier * cache_write_5m_tokens
        + cache_write_1h_multiplier * cache_write_1h_tokens
        + cache_read_multiplier * cache_read_tokens
    )
    return (input_units * input_usd + output_tokens * output_usd) / 1_000_000
