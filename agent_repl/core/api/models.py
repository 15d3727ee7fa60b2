"""What the agent needs to know about a model: window, output cap, prices (per MTok, USD), thinking.

The built-in table (agent_repl.contract, shared with the emulator) holds every current model; the endpoint's own answer (`GET /v1/models`,
agent_repl.core.api.model_catalog) overrides its window, output cap and capabilities. Prices come
only from the table (the API has none): a model without a published price costs `None`, shown
as unknown rather than guessed. `resolve_model` turns what a user typed (`opus`, `sonnet`,
`haiku` or an id) into a model id the endpoint knows, or a clear error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agent_repl.contract import ModelInfo, known_model_info, price_usd
from agent_repl.core.model.messages import Usage
from agent_repl.core.model.tokens import tokenizer_ratio

ALIASES = {"opus": "claude-opus-5-5", "sonnet": "claude-sonnet-5-5", "haiku": "claude-haiku-5-5"}


def unknown_model_info(model: str) -> ModelInfo:
    """What is assumed of a model neither the table nor the endpoint describes: a 200K window, a
    32K output cap, no price, and its version's tokenizer."""
    return ModelInfo(200_000, 32_000, None, None, token_ratio=tokenizer_ratio(model))


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


def alias_target(name: str, listing: Sequence[Mapping[str, Any]]) -> str:
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
    from agent_repl.core.api.client import UnknownModel

    listing = await client.list_models() if name.strip().lower() in ALIASES else []
    model = alias_target(name, listing)
    try:
        await client.model_data(model)
    except UnknownModel:
        known = listing or await client.list_models()
        raise ModelLookupError(unknown_model_message(name, [str(m.get("id")) for m in known])) from None
    return model


def resolve_model_sync(api_key: str | None, base_url: str | None, name: str, auth_token: str | None = None) -> str:
    """`resolve_model` from synchronous code (the command line's `--model`). Launch preparation is
    also called from code already inside an event loop (tests, the SDK transport); there the check
    runs on a loop of its own in a worker thread, since asyncio.run cannot nest."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from agent_repl.core.api.client import ModelClient

    async def resolve() -> str:
        client = ModelClient(api_key=api_key, base_url=base_url, max_retries=1, timeout=15.0, auth_token=auth_token)
        try:
            return await resolve_model(client, name)
        finally:
            await client.close()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(resolve())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, resolve()).result()


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
