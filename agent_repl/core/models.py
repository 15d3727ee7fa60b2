"""What the agent needs to know about a model: window, output cap, prices (per MTok, USD), thinking.

The built-in table holds every current model; the endpoint's own answer (`GET /v1/models`,
agent_repl.core.model_catalog) overrides its window, output cap and capabilities. Prices come
only from the table (the API has none): a model without a published price costs `None`, shown
as unknown rather than guessed. `resolve_model` turns what a user typed (`opus`, `sonnet`,
`haiku` or an id) into a model id the endpoint knows, or a clear error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agent_repl.core.messages import Usage
from agent_repl.core.tokens import DEFAULT_CLAUDE_RATIO, NEW_TOKENIZER_RATIO, tokenizer_ratio

# Cache writes cost these multiples of the input price (5-minute and 1-hour lifetimes).
CACHE_WRITE_5M_MULTIPLIER = 1.25
CACHE_WRITE_1H_MULTIPLIER = 2.0

ALIASES = {"opus": "claude-opus-5-5", "sonnet": "claude-sonnet-5-5", "haiku": "claude-haiku-5-5"}


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
    # cl100k tokens times this is the first estimate of the model's own count (agent_repl.core.tokens).
    token_ratio: float = DEFAULT_CLAUDE_RATIO
    long_prompt: LongPromptPrice | None = None

    @property
    def priced(self) -> bool:
        return self.input_usd is not None and self.output_usd is not None

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


def unknown_model_info(model: str) -> ModelInfo:
    """What is assumed of a model neither the table nor the endpoint describes: a 200K window, a
    32K output cap, no price, and its version's tokenizer."""
    return ModelInfo(200_000, 32_000, None, None, token_ratio=tokenizer_ratio(model))


def known_model_info(model: str) -> ModelInfo | None:
    """The built-in facts by id or dated alias (`claude-sonnet-4-5-20250929`), or None."""
    if model in _MODELS:
        return _MODELS[model]
    for known, info in _MODELS.items():
        suffix = model[len(known) + 1 :]
        if model.startswith(known + "-") and len(suffix) == 8 and suffix.isdigit():
            return info
    return None


def model_info(model: str) -> ModelInfo:
    """Known models from the table; a conservative guess otherwise (see `ModelCatalog`)."""
    return known_model_info(model) or unknown_model_info(model)


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


def prompt_tokens(usage: Usage) -> int:
    """The request's prompt as long-prompt pricing counts it: input, cache reads and cache writes."""
    return usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens


def cost_usd(usage: Usage, model: str, info: ModelInfo | None = None) -> float | None:
    """One request's cost at the documented multipliers: 5m writes 1.25x, 1h writes 2x, reads at
    the model's rate, and the long-prompt rate when its prompt is over the threshold. None when
    the model has no known price."""
    info = info or model_info(model)
    if info.input_usd is None or info.output_usd is None:
        return None
    input_usd, output_usd = info.input_usd, info.output_usd
    if info.long_prompt is not None and prompt_tokens(usage) > info.long_prompt.threshold_tokens:
        input_usd, output_usd = info.long_prompt.input_usd, info.long_prompt.output_usd
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
        input_usd=input_usd,
        output_usd=output_usd,
        cache_read_multiplier=info.cache_read_multiplier,
    )


def cost_text(cost: float | None) -> str:
    """A cost as shown to the user: `$0.0123`, or `?` when a model used has no known price."""
    return "?" if cost is None else f"${cost:.4f}"


def add_cost(total: float | None, cost: float | None) -> float | None:
    """A running total that stays unknown once any part of it is."""
    return None if total is None or cost is None else total + cost
