"""What the agent needs to know about a model: window, output cap, prices (per MTok, USD), thinking.

Facts come from the built-in table, else from `GET /v1/models/{id}` (learned once per session
into a `ModelCatalog`), else a conservative guess. `resolve_model` turns what a user typed
(`opus`, `sonnet`, `haiku` or an id) into a model id the endpoint knows, or a clear error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_repl.core.messages import Usage

# Cache writes cost these multiples of the input price (5-minute and 1-hour lifetimes).
CACHE_WRITE_5M_MULTIPLIER = 1.25
CACHE_WRITE_1H_MULTIPLIER = 2.0

ALIASES = {"opus": "claude-opus-5-5", "sonnet": "claude-sonnet-5-5", "haiku": "claude-haiku-5-5"}


@dataclass(frozen=True)
class ModelInfo:
    context_window: int
    max_output_tokens: int
    input_usd: float
    output_usd: float
    cache_read_multiplier: float = 0.1
    # Whether the model thinks when a request sends no `thinking` field.
    thinking_default_on: bool = False
    # Accepts the API's on-demand compaction (beta compact-2026-09-04).
    on_demand_compaction: bool = False

    @property
    def output_multiplier(self) -> float:
        """The output price relative to base input (5 when the price is unknown)."""
        return self.output_usd / self.input_usd if self.input_usd else 5.0


def _modern(input_usd: float, output_usd: float, cache_read: float = 0.1) -> ModelInfo:
    return ModelInfo(1_000_000, 128_000, input_usd, output_usd, cache_read, True, True)


_MODELS: dict[str, ModelInfo] = {
    "claude-opus-5-5": _modern(4.0, 20.0, 0.05),
    # The reference calls Sonnet 5.5's read multiplier uncertain (0.05 or 0.1).
    "claude-sonnet-5-5": _modern(2.0, 10.0),
    "claude-haiku-5-5": _modern(0.10, 0.50),
    "claude-opus-5": _modern(5.0, 25.0),
    "claude-sonnet-5": _modern(2.0, 10.0),
    "claude-sonnet-4-6": ModelInfo(1_000_000, 128_000, 3.0, 15.0, on_demand_compaction=True),
    "claude-opus-4-6": ModelInfo(1_000_000, 128_000, 5.0, 25.0, on_demand_compaction=True),
    "claude-sonnet-4-5": ModelInfo(200_000, 64_000, 3.0, 15.0),
    "claude-opus-4-5": ModelInfo(200_000, 64_000, 5.0, 25.0),
    "claude-haiku-4-5": ModelInfo(200_000, 64_000, 1.0, 5.0),
}
UNKNOWN_MODEL = ModelInfo(200_000, 32_000, 3.0, 15.0)


def known_model_info(model: str) -> ModelInfo | None:
    """The built-in facts by id or dated alias (`claude-sonnet-4-5-20250929`), or None."""
    if model in _MODELS:
        return _MODELS[model]
    for known, info in _MODELS.items():
        if model.startswith(known + "-"):
            return info
    return None


def model_info(model: str) -> ModelInfo:
    """Known models from the table; a conservative guess otherwise (see `ModelCatalog`)."""
    return known_model_info(model) or UNKNOWN_MODEL


def info_from_api(data: Mapping[str, Any], base: ModelInfo = UNKNOWN_MODEL) -> ModelInfo:
    """Facts from a `GET /v1/models/{id}` ModelInfo body; prices stay the guess (the API has none)."""
    capabilities = data.get("capabilities") or {}
    thinking_types = ((capabilities.get("thinking") or {}).get("types")) or {}
    supported = {name for name, flag in thinking_types.items() if (flag or {}).get("supported")}
    compaction = (capabilities.get("compaction") or {}).get("summarize") or {}
    return dataclasses.replace(
        base,
        context_window=int(data.get("max_input_tokens") or base.context_window),
        max_output_tokens=int(data.get("max_tokens") or base.max_output_tokens),
        # Only a model that cannot turn thinking off surely thinks by default.
        thinking_default_on=bool(supported - {"disabled", "between_tools"}) and "disabled" not in supported,
        on_demand_compaction=bool(compaction.get("supported")),
    )


@dataclass
class ModelCatalog:
    """The table plus what the endpoint said about models it lacks (one session's cache)."""

    learned: dict[str, ModelInfo] = field(default_factory=dict)

    def info(self, model: str) -> ModelInfo:
        return known_model_info(model) or self.learned.get(model) or UNKNOWN_MODEL

    def learn(self, model: str, data: Mapping[str, Any]) -> bool:
        """Keep the endpoint's facts for a model the table lacks; whether anything was learned."""
        if known_model_info(model) is not None:
            return False
        self.learned[model] = info_from_api(data)
        return True


class ModelLookupError(ValueError):
    """A model name the endpoint does not know; the message says what it does know."""


def choose_alias(alias: str, listing: Iterable[Mapping[str, Any]]) -> str | None:
    """The newest listed model of a line (`opus`, `sonnet`, `haiku`); the API lists newest first."""
    for entry in listing:
        model_id = str(entry.get("id") or "")
        if entry.get("line") == alias or (entry.get("line") is None and f"-{alias}-" in f"-{model_id}-"):
            return model_id
    return None


def unknown_model_message(name: str, available: Iterable[str]) -> str:
    names = ", ".join(sorted(set(available)))
    hint = f" Available here: {names}." if names else ""
    return f"unknown model {name!r}.{hint} Aliases: {', '.join(ALIASES)}."


def alias_target(name: str, listing: list[Mapping[str, Any]]) -> str:
    """What `opus`, `sonnet` or `haiku` stand for here (the newest listed model of that line);
    any other name unchanged."""
    alias = name.strip().lower()
    if alias not in ALIASES:
        return name
    return choose_alias(alias, listing) or ALIASES[alias]


async def resolve_model(client: Any, name: str) -> str:
    """The model id `name` stands for, checked with the endpoint (`GET /v1/models/{id}`).

    Raises `ModelLookupError` when the endpoint does not know it; an endpoint without a models
    API cannot check, so the name is taken as given."""
    from agent_repl.core.client import UnknownModel

    listing = await client.list_models() if name.strip().lower() in ALIASES else []
    model = alias_target(name, listing)
    try:
        await client.model_data(model)
    except UnknownModel:
        known = listing or await client.list_models()
        raise ModelLookupError(unknown_model_message(name, [str(m.get("id")) for m in known])) from None
    return model


def resolve_model_sync(api_key: str | None, base_url: str | None, name: str, auth_token: str | None = None) -> str:
    """`resolve_model` before any event loop runs (the command line's `--model`)."""
    import anthropic

    from agent_repl.core.client import is_model_not_found

    token = None if api_key else auth_token  # the SDK takes one of them
    with anthropic.Anthropic(
        api_key=api_key, auth_token=token, base_url=base_url, max_retries=1, timeout=15.0
    ) as sdk:

        def listing() -> list[dict[str, Any]]:
            try:
                return [m.model_dump(mode="json") for m in sdk.models.list(limit=100)]
            except anthropic.APIError:
                return []

        model = alias_target(name, listing() if name.strip().lower() in ALIASES else [])
        try:
            sdk.models.retrieve(model)
        except anthropic.NotFoundError as exc:
            if is_model_not_found(exc, model):
                raise ModelLookupError(unknown_model_message(name, [str(m.get("id")) for m in listing()])) from None
        except anthropic.APIError:
            pass  # no models API here, or it failed: the first request will tell
    return model


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


def cost_usd(usage: Usage, model: str, info: ModelInfo | None = None) -> float:
    """Cost at the documented multipliers: 5m writes 1.25x, 1h writes 2x, reads at the model's rate."""
    info = info or model_info(model)
    five_minute = usage.ephemeral_5m_input_tokens
    one_hour = usage.ephemeral_1h_input_tokens
    if five_minute + one_hour != usage.cache_creation_input_tokens:
        five_minute, one_hour = usage.cache_creation_input_tokens, 0
    return price_usd(
        input_tokens=usage.input_tokens,
        cache_write_5m_tokens=five_minute,
        cache_write_1h_tokens=one_hour,
        cache_read_tokens=usage.cache_read_input_tokens,
        output_tokens=usage.output_tokens,
        input_usd=info.input_usd,
        output_usd=info.output_usd,
        cache_read_multiplier=info.cache_read_multiplier,
    )
