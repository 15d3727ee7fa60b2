"""What the agent needs to know about a model: its window, output cap and prices (per MTok, USD)."""

from __future__ import annotations

from dataclasses import dataclass

from agent_repl.core.messages import Usage


@dataclass(frozen=True)
class ModelInfo:
    context_window: int
    max_output_tokens: int
    input_usd: float
    output_usd: float
    cache_read_multiplier: float = 0.1


_MODELS: dict[str, ModelInfo] = {
    "claude-opus-5-5": ModelInfo(1_000_000, 128_000, 4.0, 20.0, 0.05),
    "claude-sonnet-5-5": ModelInfo(1_000_000, 128_000, 2.0, 10.0),
    "claude-haiku-5-5": ModelInfo(1_000_000, 128_000, 0.10, 0.50),
    "claude-opus-5": ModelInfo(1_000_000, 128_000, 5.0, 25.0),
    "claude-sonnet-5": ModelInfo(1_000_000, 128_000, 2.0, 10.0),
    "claude-sonnet-4-6": ModelInfo(1_000_000, 128_000, 3.0, 15.0),
    "claude-opus-4-6": ModelInfo(1_000_000, 128_000, 5.0, 25.0),
    "claude-sonnet-4-5": ModelInfo(200_000, 64_000, 3.0, 15.0),
    "claude-opus-4-5": ModelInfo(200_000, 64_000, 5.0, 25.0),
    "claude-haiku-4-5": ModelInfo(200_000, 64_000, 1.0, 5.0),
}
_UNKNOWN = ModelInfo(200_000, 32_000, 3.0, 15.0)


def model_info(model: str) -> ModelInfo:
    """Known models by id or dated alias (`claude-sonnet-4-5-20250929`); a conservative guess otherwise."""
    if model in _MODELS:
        return _MODELS[model]
    for known, info in _MODELS.items():
        if model.startswith(known + "-"):
            return info
    return _UNKNOWN


def cost_usd(usage: Usage, model: str) -> float:
    """Cost at the documented multipliers: 5m writes 1.25x, 1h writes 2x, reads at the model's rate."""
    info = model_info(model)
    five_minute = usage.ephemeral_5m_input_tokens
    one_hour = usage.ephemeral_1h_input_tokens
    if five_minute + one_hour != usage.cache_creation_input_tokens:
        five_minute, one_hour = usage.cache_creation_input_tokens, 0
    input_units = (
        usage.input_tokens
        + 1.25 * five_minute
        + 2.0 * one_hour
        + info.cache_read_multiplier * usage.cache_read_input_tokens
    )
    return (input_units * info.input_usd + usage.output_tokens * info.output_usd) / 1_000_000
