"""Usage totals and their price (§4.10): 5m writes at 1.25x input, 1h writes at 2x, reads at the
model's read multiplier, output at the output price. Haiku 5.5 bills the whole request at its
upper tier when the prompt is over the tier threshold."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import Any

from agent_repl.contract import price_usd
from agent_repl.emulator.cache import CacheUsage
from agent_repl.emulator.models import ModelSpec


def prices(spec: ModelSpec, prompt_tokens: int) -> tuple[float, float]:
    """(input, output) USD per million tokens for a request whose prompt has `prompt_tokens`."""
    if spec.tier_threshold_tokens is not None and prompt_tokens > spec.tier_threshold_tokens:
        return (
            spec.input_usd_per_mtok_above_tier
            if spec.input_usd_per_mtok_above_tier is not None
            else spec.input_usd_per_mtok,
            spec.output_usd_per_mtok_above_tier
            if spec.output_usd_per_mtok_above_tier is not None
            else spec.output_usd_per_mtok,
        )
    return spec.input_usd_per_mtok, spec.output_usd_per_mtok


def _cost(spec: ModelSpec, usage: CacheUsage | None, output_tokens: int, prompt_tokens: int) -> float:
    input_usd, output_usd = prices(spec, prompt_tokens)
    return price_usd(
        input_tokens=usage.input_tokens if usage else 0,
        cache_write_5m_tokens=usage.ephemeral_5m_input_tokens if usage else 0,
        cache_write_1h_tokens=usage.ephemeral_1h_input_tokens if usage else 0,
        cache_read_tokens=usage.cache_read_input_tokens if usage else 0,
        output_tokens=output_tokens,
        input_usd=input_usd,
        output_usd=output_usd,
        cache_read_multiplier=spec.cache_read_multiplier,
        cache_write_5m_multiplier=spec.cache_write_5m_multiplier,
        cache_write_1h_multiplier=spec.cache_write_1h_multiplier,
    )


def input_cost(spec: ModelSpec, usage: CacheUsage, prompt_tokens: int) -> float:
    return _cost(spec, usage, 0, prompt_tokens)


def output_cost(spec: ModelSpec, output_tokens: int, prompt_tokens: int) -> float:
    return _cost(spec, None, output_tokens, prompt_tokens)


@dataclass
class Totals:
    requests: int = 0
    input_tokens: int = 0
    cache_write_5m_tokens: int = 0
    cache_write_1h_tokens: int = 0
    cache_read_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class UsageMeter:
    """Running totals, overall and per model id. Input is added when a response starts,
    output when it completes."""

    def __init__(self) -> None:
        self._by_model: dict[str, Totals] = {}
        self._lock = threading.Lock()

    def _model(self, spec: ModelSpec) -> Totals:
        return self._by_model.setdefault(spec.id, Totals())

    def add_input(self, spec: ModelSpec, usage: CacheUsage, prompt_tokens: int) -> None:
        with self._lock:
            totals = self._model(spec)
            totals.requests += 1
            totals.input_tokens += usage.input_tokens
            totals.cache_write_5m_tokens += usage.ephemeral_5m_input_tokens
            totals.cache_write_1h_tokens += usage.ephemeral_1h_input_tokens
            totals.cache_read_tokens += usage.cache_read_input_tokens
            totals.cost_usd += input_cost(spec, usage, prompt_tokens)

    def add_output(self, spec: ModelSpec, output_tokens: int, prompt_tokens: int) -> None:
        with self._lock:
            totals = self._model(spec)
            totals.output_tokens += output_tokens
            totals.cost_usd += output_cost(spec, output_tokens, prompt_tokens)

    def totals(self) -> dict[str, Any]:
        """`{...overall totals, "by_model": {model_id: {...}}}`; cost_usd rounded to 1e-9."""
        with self._lock:
            overall = Totals()
            by_model: dict[str, Any] = {}
            for model_id, totals in sorted(self._by_model.items()):
                for name, value in asdict(totals).items():
                    setattr(overall, name, getattr(overall, name) + value)
                by_model[model_id] = {**asdict(totals), "cost_usd": round(totals.cost_usd, 9)}
            return {**asdict(overall), "cost_usd": round(overall.cost_usd, 9), "by_model": by_model}
