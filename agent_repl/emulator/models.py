"""The model table: what each model id accepts and costs (§4.6, §4.10, §9 of the API reference).

`ModelSpec` is the inside representation (a frozen dataclass). The JSON file given with
`--model-table` is a boundary, so it is validated with pydantic and turned into specs.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_repl.contract import (
    CACHE_WRITE_1H_MULTIPLIER,
    CACHE_WRITE_5M_MULTIPLIER,
    DEFAULT_CLAUDE_RATIO,
    known_model_info,
)

# The emulated tokenizer counts cl100k times the ratio the agent estimates with.
DEFAULT_TOKEN_FACTOR = DEFAULT_CLAUDE_RATIO


@dataclass(frozen=True)
class ModelSpec:
    id: str
    display_name: str
    context_window: int
    max_output_tokens: int
    min_cacheable_tokens: int
    # Price of a cache read relative to base input (0.1 on most models, §4.10).
    cache_read_multiplier: float
    input_usd_per_mtok: float
    output_usd_per_mtok: float
    allows_prefill: bool
    token_factor: float = DEFAULT_TOKEN_FACTOR
    # The `thinking.type` values the model accepts.
    thinking_types: frozenset[str] = frozenset({"adaptive", "disabled"})
    # Whether the model thinks when the request has no `thinking` field.
    thinking_default_on: bool = False
    thinking_display_default: Literal["summarized", "omitted"] = "summarized"
    # Thinking blocks sent back are checked against the prefix they were produced after.
    preserved_thinking: bool = False
    # Short text written between tool calls comes back as thinking ("progress updates").
    progress_as_thinking: bool = False
    # Accepts the top-level `compaction` parameter (beta compact-2026-09-04).
    on_demand_compaction: bool = False
    # The model line (`opus`, `sonnet`, `haiku`) the models API reports.
    line: str | None = None
    # Older models drop thinking of earlier turns from the prompt (§7, "prior-turn thinking").
    keeps_prior_thinking: bool = True
    forced_tool_choice: bool = True
    # Accepts temperature, top_p and top_k (Sonnet 5.5 answers them with a 400).
    sampling_params: bool = True
    created_at: str = "2026-01-01T00:00:00Z"
    aliases: tuple[str, ...] = ()
    cache_write_5m_multiplier: float = CACHE_WRITE_5M_MULTIPLIER
    cache_write_1h_multiplier: float = CACHE_WRITE_1H_MULTIPLIER
    # Tiered pricing (Haiku 5.5): prompts above the threshold bill at the second pair of prices.
    tier_threshold_tokens: int | None = None
    input_usd_per_mtok_above_tier: float | None = None
    output_usd_per_mtok_above_tier: float | None = None


def _agent_facts(model_id: str) -> dict[str, Any]:
    """What the model table shared with the agent says of a model (agent_repl.contract): window, output
    cap, prices, read multiplier, thinking default, on-demand compaction, tokenizer ratio and
    long-prompt price, stated once there. A model without a published price meters at zero."""
    info = known_model_info(model_id)
    assert info is not None, f"{model_id} is missing from agent_repl.contract"
    facts: dict[str, Any] = {
        "context_window": info.context_window,
        "max_output_tokens": info.max_output_tokens,
        "input_usd_per_mtok": info.input_usd or 0.0,
        "output_usd_per_mtok": info.output_usd or 0.0,
        "cache_read_multiplier": info.cache_read_multiplier,
        "thinking_default_on": info.thinking_default_on,
        "on_demand_compaction": info.on_demand_compaction,
        "token_factor": info.token_ratio,
    }
    if info.long_prompt is not None:
        facts["tier_threshold_tokens"] = info.long_prompt.threshold_tokens
        facts["input_usd_per_mtok_above_tier"] = info.long_prompt.input_usd
        facts["output_usd_per_mtok_above_tier"] = info.long_prompt.output_usd
    return facts


def _modern(*, id: str, **fields: Any) -> ModelSpec:
    """The *-5-5 generation (and Fable/Mythos 5.1): 512-token cache minimum, no prefill; adaptive
    thinking with its display omitted, preserved thinking."""
    return ModelSpec(
        id=id,
        min_cacheable_tokens=512,
        allows_prefill=False,
        thinking_display_default="omitted",
        preserved_thinking=True,
        **_agent_facts(id),
        **fields,
    )


def _adaptive(*, id: str, **fields: Any) -> ModelSpec:
    """Claude 4.6 to 5: adaptive thinking, no prefill (§9)."""
    return ModelSpec(id=id, allows_prefill=False, **_agent_facts(id), **fields)


def _legacy(*, id: str, **fields: Any) -> ModelSpec:
    """The 4.5 generation: prefill allowed, extended thinking only."""
    return ModelSpec(
        id=id,
        allows_prefill=True,
        thinking_types=frozenset({"enabled", "disabled"}),
        **_agent_facts(id),
        **fields,
    )


def _builtin_specs() -> list[ModelSpec]:
    """Every model of the agent's table, newest of each line first (the models API's order);
    thinking rules and cache minimums from §4.6 and §9 of the API reference."""
    always_on = frozenset({"adaptive"})
    switchable = frozenset({"adaptive", "disabled"})
    return [
        _modern(
            id="claude-opus-5-5",
            display_name="Claude Opus 5.5",
            thinking_types=always_on,
            progress_as_thinking=True,
            forced_tool_choice=False,
            created_at="2026-09-22T00:00:00Z",
            line="opus",
        ),
        _modern(
            id="claude-sonnet-5-5",
            display_name="Claude Sonnet 5.5",
            thinking_types=frozenset({"adaptive", "between_tools"}),
            progress_as_thinking=True,
            forced_tool_choice=False,
            sampling_params=False,
            created_at="2026-09-28T00:00:00Z",
            line="sonnet",
        ),
        _modern(
            id="claude-haiku-5-5",
            display_name="Claude Haiku 5.5",
            created_at="2026-10-07T00:00:00Z",
            line="haiku",
        ),
        _modern(
            id="claude-fable-5-1",
            sampling_params=False,
            display_name="Claude Fable 5.1",
            thinking_types=always_on,
            forced_tool_choice=False,
            line="fable",
        ),
        _modern(
            id="claude-mythos-5-1",
            sampling_params=False,
            display_name="Claude Mythos 5.1",
            thinking_types=always_on,
            forced_tool_choice=False,
            line="mythos",
        ),
        _adaptive(
            id="claude-opus-5",
            sampling_params=False,
            display_name="Claude Opus 5",
            min_cacheable_tokens=512,
            thinking_types=switchable,
            created_at="2026-07-24T00:00:00Z",
            line="opus",
        ),
        _adaptive(
            id="claude-fable-5",
            sampling_params=False,
            display_name="Claude Fable 5",
            min_cacheable_tokens=512,
            thinking_types=always_on,
            created_at="2026-06-09T00:00:00Z",
            line="fable",
        ),
        _adaptive(
            id="claude-mythos-5",
            sampling_params=False,
            display_name="Claude Mythos 5",
            min_cacheable_tokens=512,
            thinking_types=always_on,
            created_at="2026-06-09T00:00:00Z",
            line="mythos",
        ),
        _adaptive(
            id="claude-sonnet-5",
            sampling_params=False,
            display_name="Claude Sonnet 5",
            min_cacheable_tokens=1_024,
            thinking_types=switchable,
            line="sonnet",
        ),
        _adaptive(
            id="claude-opus-4-8",
            display_name="Claude Opus 4.8",
            min_cacheable_tokens=1_024,
            sampling_params=False,
            line="opus",
        ),
        _adaptive(
            id="claude-opus-4-7",
            display_name="Claude Opus 4.7",
            min_cacheable_tokens=2_048,
            # Sampling parameters are a 400 from Claude 4.7 on (§9).
            sampling_params=False,
            created_at="2026-04-16T00:00:00Z",
            line="opus",
        ),
        _adaptive(
            id="claude-mythos-preview",
            display_name="Claude Mythos Preview",
            min_cacheable_tokens=2_048,
            thinking_types=frozenset({"adaptive", "enabled"}),
            created_at="2026-04-07T00:00:00Z",
            line="mythos",
        ),
        _adaptive(
            id="claude-opus-4-6",
            display_name="Claude Opus 4.6",
            min_cacheable_tokens=4_096,
            thinking_types=frozenset({"adaptive", "enabled", "disabled"}),
            created_at="2026-02-05T00:00:00Z",
            line="opus",
        ),
        _adaptive(
            id="claude-sonnet-4-6",
            display_name="Claude Sonnet 4.6",
            min_cacheable_tokens=1_024,
            thinking_types=frozenset({"adaptive", "enabled", "disabled"}),
            line="sonnet",
        ),
        _legacy(
            id="claude-sonnet-4-5",
            display_name="Claude Sonnet 4.5",
            min_cacheable_tokens=1_024,
            keeps_prior_thinking=False,
            created_at="2025-09-29T00:00:00Z",
            aliases=("claude-sonnet-4-5-20250929",),
            line="sonnet",
        ),
        _legacy(
            id="claude-haiku-4-5",
            display_name="Claude Haiku 4.5",
            min_cacheable_tokens=4_096,
            keeps_prior_thinking=False,
            created_at="2025-10-01T00:00:00Z",
            aliases=("claude-haiku-4-5-20251001",),
            line="haiku",
        ),
        _legacy(
            id="claude-opus-4-5",
            display_name="Claude Opus 4.5",
            min_cacheable_tokens=4_096,
            created_at="2025-11-01T00:00:00Z",
            aliases=("claude-opus-4-5-20251101",),
            line="opus",
        ),
    ]


def table_from_specs(specs: list[ModelSpec]) -> dict[str, ModelSpec]:
    """Index specs by id and by every alias (an alias maps to the same spec, so it shares the cache)."""
    table: dict[str, ModelSpec] = {}
    for spec in specs:
        for name in (spec.id, *spec.aliases):
            table[name] = spec
    return table


def default_model_table() -> dict[str, ModelSpec]:
    return table_from_specs(_builtin_specs())


def unique_specs(table: dict[str, ModelSpec]) -> list[ModelSpec]:
    """Each model once, in table order (for `GET /v1/models`)."""
    seen: dict[str, ModelSpec] = {}
    for spec in table.values():
        seen.setdefault(spec.id, spec)
    return list(seen.values())


def with_context_window(spec: ModelSpec, window: int) -> ModelSpec:
    """The spec with its context window forced (`--context-window N`)."""
    if window <= 0:
        raise ValueError(f"context window must be positive, got {window}")
    return dataclasses.replace(spec, context_window=window)


class ModelTableError(ValueError):
    """A model table file that cannot be used; the message names the file and the field."""


class _ModelEntry(BaseModel):
    # Built when a table file is read, not when the agent checks a model against the built-in table.
    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str = Field(min_length=1)
    display_name: str | None = None
    context_window: int | None = Field(default=None, gt=0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    min_cacheable_tokens: int | None = Field(default=None, ge=0)
    cache_read_multiplier: float | None = Field(default=None, ge=0)
    input_usd_per_mtok: float | None = Field(default=None, ge=0)
    output_usd_per_mtok: float | None = Field(default=None, ge=0)
    allows_prefill: bool | None = None
    token_factor: float | None = Field(default=None, gt=0)
    thinking_types: list[Literal["enabled", "adaptive", "disabled", "between_tools"]] | None = None
    thinking_default_on: bool | None = None
    thinking_display_default: Literal["summarized", "omitted"] | None = None
    keeps_prior_thinking: bool | None = None
    forced_tool_choice: bool | None = None
    sampling_params: bool | None = None
    preserved_thinking: bool | None = None
    progress_as_thinking: bool | None = None
    on_demand_compaction: bool | None = None
    line: str | None = None
    created_at: str | None = None
    aliases: list[str] | None = None
    cache_write_5m_multiplier: float | None = Field(default=None, ge=0)
    cache_write_1h_multiplier: float | None = Field(default=None, ge=0)
    tier_threshold_tokens: int | None = Field(default=None, gt=0)
    input_usd_per_mtok_above_tier: float | None = Field(default=None, ge=0)
    output_usd_per_mtok_above_tier: float | None = Field(default=None, ge=0)


class _ModelTableFile(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    # True: entries override or add to the built-in table; an entry for a known id may name
    # only the fields it changes.
    extends_defaults: bool = False
    models: list[_ModelEntry]


_REQUIRED = (
    "display_name",
    "context_window",
    "max_output_tokens",
    "min_cacheable_tokens",
    "cache_read_multiplier",
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "allows_prefill",
)


def _spec_from_entry(entry: _ModelEntry, base: ModelSpec | None, where: str) -> ModelSpec:
    given = entry.model_dump(exclude_none=True)
    if "thinking_types" in given:
        given["thinking_types"] = frozenset(given["thinking_types"])
    if "aliases" in given:
        given["aliases"] = tuple(given["aliases"])
    if base is not None:
        given.pop("id")  # an entry may name a known model by an alias; the spec keeps its own id
        return dataclasses.replace(base, **given)
    missing = [name for name in _REQUIRED if name not in given]
    if missing:
        raise ModelTableError(
            f"{where}: missing required field(s) {', '.join(missing)} for new model {entry.id!r}"
        )
    return ModelSpec(**given)


def load_model_table(path: str | Path) -> dict[str, ModelSpec]:
    """Read a model table JSON file: `{"extends_defaults"?: bool, "models": [{...}, ...]}` or a bare list."""
    source = Path(path)
    try:
        raw = json.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelTableError(f"{source}: cannot read model table: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise ModelTableError(
            f"{source}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from exc
    if isinstance(raw, list):
        raw = {"models": raw}
    try:
        parsed = _ModelTableFile.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ModelTableError(f"{source}: {where}: {first['msg']}") from exc
    base_table = default_model_table() if parsed.extends_defaults else {}
    specs: dict[str, ModelSpec] = {spec.id: spec for spec in unique_specs(base_table)}
    for index, entry in enumerate(parsed.models):
        base = base_table.get(entry.id)
        spec = _spec_from_entry(entry, base, f"{source}: models.{index}")
        specs[spec.id] = spec
    if not specs:
        raise ModelTableError(f"{source}: the table defines no models")
    return table_from_specs(list(specs.values()))
