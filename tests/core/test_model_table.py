"""The model table: prices for every current model, the long-prompt price, unknown prices, the
tokenizer ratio per family, and the catalog that lays the endpoint's answers over the table."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from agent_repl.contract import known_model_info, table_models
from agent_repl.core.api.model_catalog import MAX_AGE, ModelCatalog, cache_file
from agent_repl.core.api.models import add_cost, cost_text, cost_usd, model_info
from agent_repl.core.model.messages import Usage
from agent_repl.core.model.tokens import DEFAULT_CLAUDE_RATIO, NEW_TOKENIZER_RATIO, tokenizer_ratio

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def test_the_table_holds_every_current_model_the_docs_list():
    listed = set(table_models())
    for model in (
        "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-fable-5-1", "claude-mythos-5-1",
        "claude-opus-5", "claude-sonnet-5", "claude-fable-5", "claude-mythos-5", "claude-opus-4-8",
        "claude-opus-4-7", "claude-mythos-preview", "claude-opus-4-6", "claude-sonnet-4-6",
        "claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5",
    ):  # fmt: skip
        assert model in listed
    # Prices as the pricing page gives them (input, output per MTok).
    assert (model_info("claude-opus-4-7").input_usd, model_info("claude-opus-4-7").output_usd) == (5.0, 25.0)
    assert (model_info("claude-opus-4-8").input_usd, model_info("claude-opus-4-8").output_usd) == (5.0, 25.0)
    assert (model_info("claude-sonnet-5").input_usd, model_info("claude-sonnet-5").output_usd) == (2.0, 10.0)
    assert model_info("claude-fable-5-1").cache_read_multiplier == 0.025
    # No published price: unknown, not a guess.
    assert model_info("claude-mythos-preview").input_usd is None
    assert known_model_info("claude-sonnet-4-5-20250929") is known_model_info("claude-sonnet-4-5")
    # A newer minor version is not taken for its elder.
    assert known_model_info("claude-opus-5-6") is None


def test_a_model_without_a_price_costs_unknown_and_keeps_the_total_unknown():
    usage = Usage(input_tokens=1_000, output_tokens=100)
    assert cost_usd(usage, "claude-mythos-preview") is None
    assert cost_usd(usage, "claude-fable-9") is None  # missing from the table: no guess either
    assert add_cost(0.5, None) is None and add_cost(None, 0.5) is None and add_cost(0.5, 0.25) == 0.75
    assert cost_text(None) == "?" and cost_text(0.5) == "$0.5000"


def test_haiku_5_5_bills_the_whole_request_at_the_long_prompt_rate_over_100k():
    at_threshold = Usage(input_tokens=100_000, output_tokens=1_000)
    over = Usage(input_tokens=100_001, output_tokens=1_000)
    assert cost_usd(at_threshold, "claude-haiku-5-5") == pytest.approx((100_000 * 0.10 + 1_000 * 0.50) / 1e6)
    assert cost_usd(over, "claude-haiku-5-5") == pytest.approx((100_001 * 0.50 + 1_000 * 2.50) / 1e6)
    # Cache reads and writes count toward the prompt, and take the higher rate's multiples.
    cached = Usage(
        input_tokens=1_000,
        cache_read_input_tokens=90_000,
        cache_creation_input_tokens=10_000,
        ephemeral_5m_input_tokens=10_000,
        output_tokens=500,
    )
    units = 1_000 + 0.1 * 90_000 + 1.25 * 10_000
    assert cost_usd(cached, "claude-haiku-5-5") == pytest.approx((units * 0.50 + 500 * 2.50) / 1e6)
    # Other models have one rate at any size.
    big = Usage(input_tokens=500_000)
    assert cost_usd(big, "claude-sonnet-5-5") == pytest.approx(500_000 * 2.0 / 1e6)


def test_the_estimate_ratio_follows_the_tokenizer_family():
    # Claude 4.7 and later count about 30% more tokens for the same text.
    assert NEW_TOKENIZER_RATIO == pytest.approx(DEFAULT_CLAUDE_RATIO * 1.3, abs=0.01)
    for model in (
        "claude-opus-4-7",
        "claude-opus-4-8",
        "claude-sonnet-5",
        "claude-sonnet-5-5",
        "claude-haiku-5-5",
        "claude-opus-5-5",
    ):
        assert model_info(model).token_ratio == NEW_TOKENIZER_RATIO, model
    for model in ("claude-opus-4-6", "claude-sonnet-4-6", "claude-sonnet-4-5", "claude-haiku-4-5"):
        assert model_info(model).token_ratio == DEFAULT_CLAUDE_RATIO, model
    # A model missing from the table: its version says its family.
    assert tokenizer_ratio("claude-fable-5-2") == NEW_TOKENIZER_RATIO
    assert tokenizer_ratio("claude-sonnet-4-5-20250929") == DEFAULT_CLAUDE_RATIO
    assert model_info("claude-opus-6").token_ratio == NEW_TOKENIZER_RATIO


def _answer(window: int, output: int, *, cache_editing: bool = False) -> dict:
    context_management = {"cache_edits_agent_repl": {"supported": True}} if cache_editing else {}
    return {
        "id": "x",
        "max_input_tokens": window,
        "max_tokens": output,
        "capabilities": {
            "compaction": {"supported": True, "summarize": {"supported": True}},
            "context_management": context_management,
            "thinking": {"types": {"adaptive": {"supported": True}, "disabled": {"supported": False}}},
        },
    }


def test_the_endpoints_answer_overrides_window_and_output_but_never_the_price(tmp_path):
    catalog = ModelCatalog.on_disk(tmp_path, "http://127.0.0.1:1")
    assert catalog.info("claude-haiku-5-5").context_window == 1_000_000
    changed = catalog.remember(
        {
            "claude-haiku-5-5": _answer(150_000, 20_000),
            "claude-new-1": _answer(300_000, 40_000, cache_editing=True),
        },
        NOW,
    )
    assert changed
    haiku = catalog.info("claude-haiku-5-5")
    assert (haiku.context_window, haiku.max_output_tokens, haiku.input_usd) == (150_000, 20_000, 0.10)
    new = catalog.info("claude-new-1")
    assert (new.context_window, new.max_output_tokens, new.input_usd) == (300_000, 40_000, None)
    assert new.thinking_default_on and new.on_demand_compaction
    assert catalog.supports_cache_editing("claude-new-1") and not catalog.supports_cache_editing(
        "claude-haiku-5-5"
    )
    # The same answer again changes nothing.
    assert not catalog.remember({"claude-new-1": _answer(300_000, 40_000, cache_editing=True)}, NOW)

    # Kept per endpoint: another start on the same endpoint reads it back, another endpoint does not.
    again = ModelCatalog.on_disk(tmp_path, "http://127.0.0.1:1")
    assert again.info("claude-new-1").context_window == 300_000
    assert again.is_fresh("claude-new-1", NOW + MAX_AGE - timedelta(minutes=1))
    assert not again.is_fresh("claude-new-1", NOW + MAX_AGE)
    assert not ModelCatalog.on_disk(tmp_path, "http://127.0.0.1:2").knows("claude-new-1")


def test_a_damaged_cache_is_asked_again_not_trusted(tmp_path):
    path = cache_file(tmp_path, None)
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps({"version": 1, "models": {"claude-new-1": {"fetched_at": "yesterday", "data": {}}}})
    )
    catalog = ModelCatalog.on_disk(tmp_path, None)
    assert not catalog.knows("claude-new-1")
    assert catalog.problem and "unreadable" in catalog.problem
    path.write_text("{not json")
    assert not ModelCatalog.on_disk(tmp_path, None).knows("claude-new-1")


def test_files_of_endpoints_unused_for_a_month_are_dropped(tmp_path):
    import os
    import time

    old = cache_file(tmp_path, "http://127.0.0.1:40001")
    recent = cache_file(tmp_path, "http://127.0.0.1:40002")
    old.parent.mkdir(parents=True)
    for path in (old, recent):
        path.write_text(json.dumps({"version": 1, "models": {}}))
    month_ago = time.time() - 31 * 24 * 3600
    os.utime(old, (month_ago, month_ago))
    ModelCatalog.on_disk(tmp_path, "http://127.0.0.1:40003").remember({"claude-new-1": _answer(1, 1)}, NOW)
    assert not old.exists() and recent.exists()
    assert cache_file(tmp_path, "http://127.0.0.1:40003").exists()
