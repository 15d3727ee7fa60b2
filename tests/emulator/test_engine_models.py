"""The model table: built-in values from the API reference, JSON loading, window override."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_repl.emulator.models import (
    ModelTableError,
    default_model_table,
    load_model_table,
    unique_specs,
    with_context_window,
)


def test_default_table_has_the_required_models_and_aliases() -> None:
    table = default_model_table()
    for model_id in (
        "claude-sonnet-5-5",
        "claude-opus-5-5",
        "claude-haiku-5-5",
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
    ):
        assert table[model_id].id == model_id
    assert table["claude-sonnet-4-5-20250929"] is table["claude-sonnet-4-5"]
    assert table["claude-haiku-4-5-20251001"] is table["claude-haiku-4-5"]
    assert len({s.id for s in unique_specs(table)}) == len(unique_specs(table))


def test_default_values_follow_the_reference() -> None:
    table = default_model_table()
    opus = table["claude-opus-5-5"]
    assert (opus.context_window, opus.max_output_tokens, opus.min_cacheable_tokens) == (
        1_000_000,
        128_000,
        512,
    )
    assert (opus.cache_read_multiplier, opus.input_usd_per_mtok, opus.output_usd_per_mtok) == (
        0.05,
        4.0,
        20.0,
    )
    # The newer tokenizer (Claude 4.7 on) counts about 30% more than the older one.
    assert not opus.allows_prefill and opus.token_factor == 1.39
    assert table["claude-opus-4-6"].token_factor == table["claude-haiku-4-5"].token_factor == 1.07
    haiku45 = table["claude-haiku-4-5"]
    assert (haiku45.context_window, haiku45.max_output_tokens, haiku45.min_cacheable_tokens) == (
        200_000,
        64_000,
        4_096,
    )
    assert haiku45.allows_prefill
    assert table["claude-sonnet-4-5"].min_cacheable_tokens == 1_024
    assert table["claude-haiku-5-5"].tier_threshold_tokens == 100_000


def test_with_context_window_overrides_only_the_window() -> None:
    spec = default_model_table()["claude-sonnet-5-5"]
    small = with_context_window(spec, 5_000)
    assert small.context_window == 5_000 and small.min_cacheable_tokens == spec.min_cacheable_tokens
    with pytest.raises(ValueError):
        with_context_window(spec, 0)


def test_load_a_full_table(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    entry = {
        "id": "claude-test-1",
        "display_name": "Test",
        "context_window": 10_000,
        "max_output_tokens": 1_000,
        "min_cacheable_tokens": 100,
        "cache_read_multiplier": 0.1,
        "input_usd_per_mtok": 1,
        "output_usd_per_mtok": 2,
        "allows_prefill": True,
        "aliases": ["claude-test-1-20260101"],
        "token_factor": 1.3,
    }
    path.write_text(json.dumps([entry]))
    table = load_model_table(path)
    assert set(table) == {"claude-test-1", "claude-test-1-20260101"}
    assert table["claude-test-1"].token_factor == 1.3


def test_extending_the_defaults_may_name_only_changed_fields(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text(
        json.dumps(
            {"extends_defaults": True, "models": [{"id": "claude-sonnet-5-5", "cache_read_multiplier": 0.05}]}
        )
    )
    table = load_model_table(path)
    assert table["claude-sonnet-5-5"].cache_read_multiplier == 0.05
    assert table["claude-sonnet-5-5"].input_usd_per_mtok == 2.0
    assert "claude-opus-5-5" in table


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{oops", "not valid JSON"),
        (json.dumps({"models": [{"id": "x", "context_window": "big"}]}), "models.0.context_window"),
        (
            json.dumps({"models": [{"id": "x", "colour": 1}]}),
            "models.0.colour: Extra inputs are not permitted",
        ),
        (json.dumps({"models": [{"id": "x"}]}), "missing required field"),
        (json.dumps({"models": []}), "defines no models"),
    ],
)
def test_bad_tables_fail_with_the_file_and_field(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "models.json"
    path.write_text(content)
    with pytest.raises(ModelTableError) as caught:
        load_model_table(path)
    assert message in str(caught.value) and str(path) in str(caught.value)
