"""The benchmark's arithmetic: cost units, cache-read share, retention, prefix rewrites, aggregates."""

from __future__ import annotations

import dataclasses

import pytest

from agent_repl.emulator.cache import CacheUsage
from agent_repl.emulator.metering import UsageMeter
from agent_repl.emulator.models import default_model_table
from benchmarks.replay.metrics import (
    Aggregate,
    RunResult,
    cache_read_share,
    cost_units,
    in_view,
    is_prefix_rewrite,
    retention,
    view_text,
)

TOTALS = {
    "input_tokens": 1_000,
    "cache_write_5m_tokens": 2_000,
    "cache_write_1h_tokens": 300,
    "cache_read_tokens": 50_000,
    "output_tokens": 400,
}


def test_cost_units_use_the_models_own_multipliers():
    table = default_model_table()
    sonnet = table["claude-sonnet-5-5"]  # read 0.1x, output $10 / input $2 = 5x
    assert cost_units(TOTALS, sonnet) == pytest.approx(1_000 + 1.25 * 2_000 + 2 * 300 + 0.1 * 50_000 + 5 * 400)
    opus = table["claude-opus-5-5"]  # read 0.05x, output $20 / input $4 = 5x
    assert cost_units(TOTALS, opus) == pytest.approx(1_000 + 2_500 + 600 + 0.05 * 50_000 + 5 * 400)


def test_cost_units_agree_with_the_emulators_meter():
    spec = default_model_table()["claude-sonnet-5-5"]
    meter = UsageMeter()
    usage = CacheUsage(
        input_tokens=1_000, cache_read_input_tokens=50_000, ephemeral_5m_input_tokens=2_000, ephemeral_1h_input_tokens=300
    )
    meter.add_input(spec, usage, 53_300)
    meter.add_output(spec, 400, 53_300)
    totals = meter.totals()
    # A unit is one uncached input token: units x the input price per token is the meter's dollars.
    assert cost_units(totals, spec) * spec.input_usd_per_mtok / 1e6 == pytest.approx(totals["cost_usd"])


def test_cache_read_share_is_reads_over_all_input():
    assert cache_read_share(TOTALS) == pytest.approx(50_000 / 53_300)
    assert cache_read_share({k: 0 for k in TOTALS}) == 0.0


def test_prefix_rewrite_is_more_than_half_the_prompt_written_again():
    assert is_prefix_rewrite({"input_tokens": 0, "cache_creation_input_tokens": 110_000, "cache_read_input_tokens": 2_840})
    assert not is_prefix_rewrite({"input_tokens": 0, "cache_creation_input_tokens": 9_000, "cache_read_input_tokens": 120_000})
    assert not is_prefix_rewrite({"input_tokens": 0, "cache_creation_input_tokens": 15_000, "cache_read_input_tokens": 0})


def test_retention_finds_messages_verbatim_in_texts_tool_inputs_and_summaries():
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Fix the \"quoted\" bug\r\nplease [id:abc123]"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "/a/b.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "x"}]}]},
    ]
    text = view_text(messages)
    assert in_view('Fix the "quoted" bug\nplease', text)  # CRLF and LF count as the same
    assert in_view("Fix the \"quoted\" bug\r\nplease", text)
    assert retention(["/a/b.py", "/a/c.py", "  "], text) == (1, 2)


def _run(strategy: str, **fields: object) -> RunResult:
    return dataclasses.replace(RunResult("t", strategy, 200_000, steps=10), **fields)


def test_aggregate_pools_over_runs():
    a = _run("s", cost_units=100.0, totals={**TOTALS}, peak_input=5, users_kept=1, users_total=2,
             estimate_errors=[0.1, -0.3], pipeline_cpu_seconds=0.02, projections=10)
    b = _run("s", cost_units=50.0, totals={**TOTALS, "cache_read_tokens": 0}, peak_input=9, users_kept=2, users_total=2,
             estimate_errors=[0.2], pipeline_cpu_seconds=0.01, projections=20, stopped_at=4, overflow_errors=1)
    agg = Aggregate("s", [a, b])
    assert agg.cost_units == 150.0 and agg.peak_input == 9 and agg.overflows == 1 and agg.stopped == [b]
    assert agg.cache_read_share == pytest.approx(50_000 / (53_300 + 3_300))
    assert agg.share("users_kept", "users_total") == pytest.approx(3 / 4)
    assert agg.estimate_error == pytest.approx(0.2)
    assert agg.cpu_ms_per_request == pytest.approx(1.0)
