"""Projections that try upper bounds of the token counts before loading the encoder
(`Pipeline.bounds_first`): the bound never under-counts, and a projection counted with bounds is
used only where exact counts would decide the same; near a threshold the exact count decides."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_repl.context import projector
from agent_repl.context.autocompact import Autocompact, _pays, pays_floor
from agent_repl.context.blocking import BlockingLimit
from agent_repl.context.facts import FactCache
from agent_repl.context.pipeline import context_pipeline
from agent_repl.context.state import LastCompaction, PipelineConfig, PipelineState
from agent_repl.context.thresholds import autocompact_threshold
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
    iso_timestamp,
)
from agent_repl.core.model.tokens import cl100k_tokens, cl100k_upper_bound

SAMPLES = [
    "",
    "hi",
    "a" * 5_000,
    " " * 300 + "\n\n\t" * 40,
    "def f(x):\n    return x ** 2  # squared\n" * 50,
    "naïve café — “quotes” and ‘more’ … ünïcödé",
    "日本語のテキストと中文字符，还有한국어 텍스트",
    "emoji 🙂👍🏽🧑‍🚀 and flags 🇫🇷🇯🇵",
    "<|endoftext|> <|fim_prefix|><|endofprompt|> specials read as plain text",
    "lone surrogate \ud800 in the middle",
    "0123456789" * 200,
    '{"type": "tool_use", "input": {"file_path": "/a/b/c.py"}}' * 20,
]


def _random_texts(count: int) -> list[str]:
    pick = random.Random(30)
    alphabet = [chr(c) for c in [*range(32, 127), *range(0xA0, 0x250), *range(0x4E00, 0x4E80), 0x1F600, 0x1F680, 10, 9]]
    return ["".join(pick.choice(alphabet) for _ in range(pick.randint(1, 400))) for _ in range(count)]


@pytest.mark.parametrize("text", [*SAMPLES, *_random_texts(200)])
def test_the_upper_bound_is_never_below_the_exact_count(text: str) -> None:
    assert cl100k_upper_bound(text) >= cl100k_tokens(text)


class CountingExactly:
    """The exact count, noting each text it was asked for (what would load the encoder)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, text: str) -> int:
        self.texts.append(text)
        return cl100k_tokens(text)


NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def _pipeline(tmp_path: Path, *, window: int = 50_000, fixed: tuple[str, ...] = ("the system prompt",), **config: object):
    counter = CountingExactly()
    settings = PipelineConfig(autocompact_on=True, fixed_prompt=fixed, **config)  # type: ignore[arg-type]
    settings.set_window(window)
    pipeline = context_pipeline(settings, tmp_path / "results")
    pipeline.state = PipelineState(config=settings, facts=FactCache(count=counter), clock=lambda: NOW)
    pipeline.bounds_first = True
    return pipeline, counter


@pytest.fixture(autouse=True)
def _encoder_not_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    # Other tests in this process may have loaded it; these are about a process that has not.
    monkeypatch.setattr(projector, "encoder_loaded", lambda: False)


def _same(bounded, exact) -> None:  # type: ignore[no-untyped-def]
    assert bounded.wire == exact.wire
    assert [m.uuid for m in bounded.view] == [m.uuid for m in exact.view]
    assert bounded.action == exact.action
    assert [r.model_dump(exclude={"timestamp"}) for r in bounded.records] == [
        r.model_dump(exclude={"timestamp"}) for r in exact.records
    ]
    assert bounded.body_extras == exact.body_extras
    assert bounded.cache == exact.cache


def test_a_small_request_far_from_every_threshold_is_projected_without_an_exact_count(tmp_path: Path) -> None:
    history: list[Message] = [UserMessage(content="hi", timestamp=iso_timestamp(NOW))]
    pipeline, counter = _pipeline(tmp_path)
    bounded = pipeline.project(history)
    assert counter.texts == []
    exact, _ = _pipeline(tmp_path)
    exact.bounds_first = False
    _same(bounded, exact.project(history))
    # An upper bound is no sample of the estimate's error, and teaches no ratio.
    assert pipeline.state.tokens.pending_estimate is None


def test_near_the_threshold_the_exact_count_decides(tmp_path: Path) -> None:
    pipeline, counter = _pipeline(tmp_path)
    threshold = autocompact_threshold(pipeline.state.config.effective_window)
    # Words of one token and four bytes each: the bound is about four times the count, so it
    # crosses the threshold while the exact count stays well under it.
    text = " the" * (threshold // 2)
    history: list[Message] = [UserMessage(content=text, timestamp=iso_timestamp(NOW))]
    projection = pipeline.project(history)
    assert cl100k_upper_bound(text) > threshold > cl100k_tokens(text)
    assert text in counter.texts
    assert projection.action is None
    assert pipeline.state.tokens.pending_estimate == projection.estimated_tokens
    over: list[Message] = [UserMessage(content=" the" * (threshold + 1_000), timestamp=iso_timestamp(NOW))]
    assert pipeline.project(over).action is not None


def test_a_stage_that_decides_something_counts_exactly(tmp_path: Path) -> None:
    # Two hours after the last reply the cache is cold: microcompact clears the old results and
    # records the tokens that saved, which must be the exact count.
    then = NOW - timedelta(hours=2)
    history: list[Message] = [UserMessage(content="read them", timestamp=iso_timestamp(then))]
    for n in range(8):
        use = ToolUseBlock(id=f"toolu_{n}", name="Read", input={"file_path": f"/f{n}.py"})
        history.append(AssistantMessage(message_id=f"m{n}", content=[use], timestamp=iso_timestamp(then)))
        result = ToolResultBlock(tool_use_id=f"toolu_{n}", content=f"line {n}\n" * 400)
        history.append(UserMessage(content=[result], timestamp=iso_timestamp(then)))
    usage = Usage(input_tokens=5_000, output_tokens=10)
    history.append(AssistantMessage(message_id="m9", content=[TextBlock(text="done")], usage=usage, timestamp=iso_timestamp(then)))
    history.append(UserMessage(content="hi", timestamp=iso_timestamp(NOW)))
    pipeline, counter = _pipeline(tmp_path, window=200_000, clearable_tools=frozenset({"Read"}))
    bounded = pipeline.project(history)
    exact, _ = _pipeline(tmp_path, window=200_000, clearable_tools=frozenset({"Read"}))
    exact.bounds_first = False
    expected = exact.project(history)
    assert bounded.records and counter.texts
    _same(bounded, expected)
    assert bounded.estimated_tokens == expected.estimated_tokens


def test_new_entries_large_enough_to_teach_the_ratio_are_counted_exactly(tmp_path: Path) -> None:
    def answered(pipeline: projector.Pipeline) -> list[Message]:
        first: list[Message] = [UserMessage(content="first", timestamp=iso_timestamp(NOW))]
        sent = pipeline.project(first)
        reply = AssistantMessage(
            message_id="m1", content=[TextBlock(text="ok")], timestamp=iso_timestamp(NOW), prefix_digest=sent.chain_after[-1]
        )
        pipeline.observe_response(Usage(input_tokens=3_000, output_tokens=10), anchor_uuid=reply.uuid)
        return [*first, reply]

    pipeline, counter = _pipeline(tmp_path, window=200_000)
    history = answered(pipeline)
    assert counter.texts == []
    pipeline.project([*history, UserMessage(content="word " * 2_000, timestamp=iso_timestamp(NOW))])
    assert counter.texts
    assert pipeline.state.tokens.pending_estimate is not None
    small, small_counter = _pipeline(tmp_path, window=200_000)
    history = answered(small)
    small.project([*history, UserMessage(content="hi", timestamp=iso_timestamp(NOW))])
    assert small_counter.texts == []


def test_server_side_clears_always_count_exactly(tmp_path: Path) -> None:
    pipeline, counter = _pipeline(tmp_path, server_clear=True)
    pipeline.project([UserMessage(content="hi", timestamp=iso_timestamp(NOW))])
    assert counter.texts


def _with_fixed(tokens: int, window: int = 1_000_000) -> PipelineState:
    config = PipelineConfig(autocompact_on=True, fixed_prompt=("x" * tokens,))
    config.set_window(window)
    assert config.cost_trigger
    state = PipelineState(config=config, facts=FactCache(count=len))
    state.tokens.responses = 300
    return state


@pytest.mark.parametrize("fixed", [0, 5_000, 40_000])
@pytest.mark.parametrize("window", [200_000, 1_000_000])
def test_under_its_quiet_floor_the_autocompact_check_never_acts(fixed: int, window: int) -> None:
    state = _with_fixed(fixed, window)
    quiet = Autocompact().quiet_below(state)
    floor = pays_floor(state)
    assert quiet <= autocompact_threshold(state.config.effective_window)
    for tokens in range(0, int(quiet), max(1, int(quiet) // 500)):
        assert not _pays(tokens, state)
        assert Autocompact().check(tokens, state) is None
    # The floor is where the cost trigger can start to pay, not a bar set needlessly low: with no
    # system prompt the compaction leaves exactly the floor.
    assert floor > 0


def test_after_a_compaction_the_quiet_floor_is_what_it_left() -> None:
    state = _with_fixed(5_000)
    state.compaction.last = LastCompaction(after_tokens=30_000, responses_since=3, summary_output_tokens=4_000)
    assert pays_floor(state) == 30_000
    assert all(not _pays(tokens, state) for tokens in range(0, 30_000, 100))
    # Compacted, and not one reply since: the cost trigger waits whatever the count.
    state.compaction.last = LastCompaction(after_tokens=None, responses_since=0, summary_output_tokens=4_000)
    assert Autocompact().quiet_below(state) == autocompact_threshold(state.config.effective_window)


def test_under_the_blocking_limit_the_blocking_check_never_acts() -> None:
    config = PipelineConfig(autocompact_on=False)
    config.set_window(50_000)
    state = PipelineState(config=config)
    quiet = BlockingLimit().quiet_below(state)
    assert BlockingLimit().check(int(quiet) - 1, state) is None
    assert BlockingLimit().check(int(quiet), state) is not None
