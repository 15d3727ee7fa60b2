"""Exact counts that travel with the transcript (`TokenCountsRecord`): a resume knows the counts its
session already made, by the text's digest, without loading the encoder; a damaged or implausible
record is never trusted (the text is counted again), and projections decide as with exact counts."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from agent_repl.context import facts as facts_module
from agent_repl.context import projector
from agent_repl.context.facts import FactCache
from agent_repl.context.pipeline import context_pipeline
from agent_repl.context.records import apply
from agent_repl.context.state import CLEARED_TOOL_RESULT, PipelineConfig, PipelineState
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    iso_timestamp,
)
from agent_repl.core.model.tokens import cl100k_tokens, cl100k_upper_bound
from agent_repl.transcript.records import SideRecordRegistry, TokenCountsRecord, counts_check

from .test_bounds_first import NOW, CountingExactly

TEXT = "def f(x):\n    return x ** 2  # squared\n" * 60


def _learned(
    counts: list[tuple[str, int, int]], record: TokenCountsRecord | None = None
) -> tuple[FactCache, CountingExactly]:
    counter = CountingExactly()
    state = PipelineState(facts=FactCache(count=counter))
    apply(state, record or TokenCountsRecord.of(counts))
    return state.facts, counter


def test_a_text_counted_by_an_earlier_process_is_known_by_its_digest() -> None:
    live = FactCache()
    exact = live.text_tokens(TEXT)
    counted = live.take_counted()
    assert [c[1:] for c in counted] == [(len(TEXT.encode()), exact)]
    assert live.take_counted() == []  # each count is written once
    # Through the transcript's JSON, as a resume reads it back.
    line = TokenCountsRecord.of(counted).to_json()
    record = SideRecordRegistry().parse(line)
    assert isinstance(record, TokenCountsRecord)
    resumed, counter = _learned([], record)
    assert resumed.upper_bound(TEXT) == exact
    assert resumed.text_tokens(TEXT) == exact
    assert counter.texts == []
    # A resumed process does not write again what the transcript already holds.
    assert resumed.take_counted() == []


def test_a_damaged_record_is_not_trusted() -> None:
    live = FactCache()
    live.text_tokens(TEXT)
    [(digest, size, count)] = live.take_counted()
    record = TokenCountsRecord.of([(digest, size, count)])
    record.counts = [(digest, size, count // 3)]  # a digit lost on the way: the check no longer matches
    resumed, counter = _learned([], record)
    assert resumed.upper_bound(TEXT) == cl100k_upper_bound(TEXT)
    assert resumed.text_tokens(TEXT) == cl100k_tokens(TEXT)
    assert counter.texts == [TEXT]


@pytest.mark.parametrize("count", [0, -5, 10**9])
def test_an_implausible_count_is_not_trusted_even_with_a_matching_check(count: int) -> None:
    live = FactCache()
    live.text_tokens(TEXT)
    [(digest, size, _)] = live.take_counted()
    resumed, counter = _learned([(digest, size, count)])
    assert resumed.text_tokens(TEXT) == cl100k_tokens(TEXT)
    assert counter.texts == [TEXT]


def test_entries_of_another_shape_are_passed_over() -> None:
    live = FactCache()
    live.text_tokens(TEXT)
    [(digest, size, count)] = live.take_counted()
    entries = [[digest], "text", None, [digest, True, count], [digest, float(size), count]]
    record = SideRecordRegistry().parse(
        TokenCountsRecord(counts=entries, check=counts_check(entries)).to_json()
    )
    assert isinstance(record, TokenCountsRecord) and record.intact()
    resumed, counter = _learned([], record)
    resumed.text_tokens(TEXT)
    assert counter.texts == [TEXT]


def test_a_count_for_a_text_of_another_length_is_not_used() -> None:
    live = FactCache()
    live.text_tokens(TEXT)
    [(digest, size, count)] = live.take_counted()
    resumed, counter = _learned([(digest, size + 1, count)])
    resumed.text_tokens(TEXT)
    assert counter.texts == [TEXT]


def test_the_fixed_texts_counts_are_exact() -> None:
    assert CLEARED_TOOL_RESULT in facts_module.FIXED_TEXT_COUNTS
    for text, count in facts_module.FIXED_TEXT_COUNTS.items():
        assert cl100k_tokens(text) == count
        assert FactCache(count=len).text_tokens(text) == count


def test_the_known_counts_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(facts_module, "MAX_KNOWN_COUNTS", 3)
    live = FactCache(count=len)
    for n in range(5):
        live.text_tokens(f"text {n}")
    assert len(live.take_counted()) == 5
    resumed, counter = _learned([])
    resumed.learn([(f"{n:016x}", 10, 5) for n in range(10)])
    assert len(resumed._known) == 3  # the newest
    assert set(resumed._known) == {f"{n:016x}" for n in (7, 8, 9)}


# -- projections of a resumed session ------------------------------------------------------------

# The cost-aware trigger is on from this window: its quiet floor is far under the threshold.
WINDOW = 200_000
FIXED = (
    "the system prompt, which names the folder\n" * 10,
    '[{"name": "Read", "description": "reads"}]' * 20,
)


def _history(results: int) -> list[Message]:
    """Tool results of words of one token and four bytes: their upper bounds are about four times
    their counts."""
    history: list[Message] = [UserMessage(content="look at the files", timestamp=iso_timestamp(NOW))]
    for n in range(results):
        use = ToolUseBlock(id=f"toolu_{n:04d}", name="Read", input={"file_path": f"/p/f{n}.py"})
        history.append(AssistantMessage(content=[use], message_id=f"msg_{n}", timestamp=iso_timestamp(NOW)))
        result = ToolResultBlock(tool_use_id=use.id, content=f"file {n}:" + " the" * 1_500)
        history.append(UserMessage(content=[result], timestamp=iso_timestamp(NOW)))
    history.append(
        AssistantMessage(
            content=[TextBlock(text="Read them all.")], message_id="msg_end", timestamp=iso_timestamp(NOW)
        )
    )
    return history


def _pipeline(
    tmp_path: Path,
    counts: list[tuple[str, int, int]],
    *,
    bounds_first: bool,
    now: datetime = NOW,
    **config: object,
):
    counter = CountingExactly()
    settings = PipelineConfig(autocompact_on=True, fixed_prompt=FIXED, **config)  # type: ignore[arg-type]
    settings.set_window(WINDOW)
    pipeline = context_pipeline(settings, tmp_path / "results")
    pipeline.state = PipelineState(config=settings, facts=FactCache(count=counter), clock=lambda: now)
    apply(pipeline.state, TokenCountsRecord.of(counts))
    pipeline.bounds_first = bounds_first
    return pipeline, counter


def _session_counts(history: list[Message]) -> list[tuple[str, int, int]]:
    """What the live session wrote: the counts of every text its projections counted."""
    config = PipelineConfig(autocompact_on=True, fixed_prompt=FIXED)
    config.set_window(WINDOW)
    pipeline = context_pipeline(config, Path("/nonexistent"))
    pipeline.state = PipelineState(config=config, clock=lambda: NOW)
    pipeline.preview(history, pipeline.state)
    return pipeline.state.facts.take_counted()


@pytest.fixture(autouse=True)
def _encoder_not_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(projector, "encoder_loaded", lambda: False)


@pytest.mark.parametrize("results", [4, 30, 100, 115])
def test_a_resume_with_its_counts_decides_as_exact_counts_without_counting(
    tmp_path: Path, results: int
) -> None:
    """4: under every quiet floor; 30 and 100: over the cost-aware trigger's floor, where the
    decision needs the exact count, which only the new prompt's lack; 115: over the threshold."""
    history = _history(results)
    counts = _session_counts(history)
    resumed = [*history, UserMessage(content="hi", timestamp=iso_timestamp(NOW))]
    exact, _ = _pipeline(tmp_path / "exact", [], bounds_first=False)
    expected = exact.project(resumed)
    pipeline, counter = _pipeline(tmp_path / "known", counts, bounds_first=True)
    projection = pipeline.project(resumed)
    assert projection.wire == expected.wire
    assert projection.action == expected.action
    assert [r.model_dump(exclude={"timestamp"}) for r in projection.records] == [
        r.model_dump(exclude={"timestamp"}) for r in expected.records
    ]
    if results < 115:
        assert expected.action is None
        assert counter.texts == []
        assert projection.estimate_is_upper_bound
        assert expected.estimated_tokens <= projection.estimated_tokens <= expected.estimated_tokens + 2
    else:
        assert expected.action is not None
        assert counter.texts == ["hi"]


def test_without_the_counts_the_same_resume_counts_exactly(tmp_path: Path) -> None:
    history = [*_history(30), UserMessage(content="hi", timestamp=iso_timestamp(NOW))]
    pipeline, counter = _pipeline(tmp_path, [], bounds_first=True)
    pipeline.project(history)
    assert len(counter.texts) > 30


def test_an_unknown_system_prompt_is_counted(tmp_path: Path) -> None:
    """The checks read the system prompt's count: with it unknown (written in another folder), a
    projection over the quiet floor is counted exactly."""
    history = _history(30)
    prompt_digest = facts_module.text_digest(FIXED[0].encode())
    counts = [c for c in _session_counts(history) if c[0] != prompt_digest]
    pipeline, counter = _pipeline(tmp_path, counts, bounds_first=True)
    projection = pipeline.project([*history, UserMessage(content="hi", timestamp=iso_timestamp(NOW))])
    assert not projection.estimate_is_upper_bound
    assert FIXED[0] in counter.texts
    # Under every quiet floor its upper bound is enough.
    pipeline, counter = _pipeline(tmp_path, counts, bounds_first=True)
    assert pipeline.project(
        [*_history(4), UserMessage(content="hi", timestamp=iso_timestamp(NOW))]
    ).estimate_is_upper_bound
    assert counter.texts == []


def test_a_resume_after_the_cache_expired_clears_as_exact_counts_without_counting(tmp_path: Path) -> None:
    """A resume hours later clears old tool results first (time-based microcompact), a decision
    whose record holds the tokens it saved: with the session's counts known it is the same
    record, entries and request, and no text is counted."""
    history = _history(30)
    counts = _session_counts(history)
    resumed = [*history, UserMessage(content="hi", timestamp=iso_timestamp(NOW + timedelta(hours=3)))]
    later = NOW + timedelta(hours=3)
    exact, _ = _pipeline(
        tmp_path / "exact", [], bounds_first=False, now=later, clearable_tools=frozenset({"Read"})
    )
    expected = exact.project(resumed)
    assert expected.records and expected.records[0].type == "microcompact-clear"
    pipeline, counter = _pipeline(
        tmp_path / "known", counts, bounds_first=True, now=later, clearable_tools=frozenset({"Read"})
    )
    projection = pipeline.project(resumed)
    assert counter.texts == []
    assert projection.wire == expected.wire
    assert projection.action == expected.action is None
    assert [r.model_dump(exclude={"timestamp"}) for r in projection.records] == [
        r.model_dump(exclude={"timestamp"}) for r in expected.records
    ]
    assert [m.model_dump(exclude={"uuid", "timestamp"}) for m in projection.new_messages] == [
        m.model_dump(exclude={"uuid", "timestamp"}) for m in expected.new_messages
    ]
    assert pipeline.state.microcompact == exact.state.microcompact
    # Without the counts, the same decision is counted exactly.
    uncounted, counter = _pipeline(
        tmp_path / "uncounted", [], bounds_first=True, now=later, clearable_tools=frozenset({"Read"})
    )
    assert not uncounted.project(resumed).estimate_is_upper_bound
    assert counter.texts


def test_a_live_session_writes_the_count_of_its_turns_last_reply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next request's estimate takes the last reply from its usage, so no projection counts it
    before the turn ends: with the encoder loaded (a live session counting exactly) it is counted
    then, so a resume knows every text of its view; print mode, without it, leaves it."""
    history = _history(2)
    reply = AssistantMessage(
        content=[TextBlock(text="The last answer of the turn, in a few words.")], message_id="msg_last"
    )
    config = PipelineConfig(autocompact_on=True, fixed_prompt=FIXED)
    config.set_window(WINDOW)

    def written(loaded: bool) -> set[int]:
        monkeypatch.setattr(projector, "encoder_loaded", lambda: loaded)
        pipeline = context_pipeline(config, tmp_path / str(loaded))
        pipeline.state = PipelineState(config=config, clock=lambda: NOW)
        pipeline.project(history)
        [record] = pipeline.take_counts([*history, reply])
        return {size for _, size, _ in record.counts}

    assert len(reply.content[0].text.encode()) in written(True)
    assert len(reply.content[0].text.encode()) not in written(False)
