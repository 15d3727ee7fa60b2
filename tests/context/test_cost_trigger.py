"""The cost-aware trigger (context/autocompact.py): what a compaction really costs, the hysteresis
after one, and the requests it expects before the threshold would compact anyway."""

from __future__ import annotations

from agent_repl.context.autocompact import (
    SUMMARY_OUTPUT_ESTIMATE,
    Autocompact,
    cache_write_multiplier,
    summary_output_estimate,
)
from agent_repl.context.boundary import BoundarySlice
from agent_repl.context.projector import Pipeline
from agent_repl.context.state import PipelineConfig, PipelineState
from agent_repl.context.thresholds import compaction_cost, expected_requests, requests_before_threshold
from agent_repl.core.loop.projection import Compact
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    Usage,
    UserMessage,
)


def _state(window: int = 200_000, responses: int = 0) -> PipelineState:
    config = PipelineConfig(autocompact_on=True)
    config.set_window(window)
    assert config.cost_trigger
    state = PipelineState(config=config)
    state.tokens.responses = responses
    return state


def _reply(prompt_tokens: int, n: int) -> AssistantMessage:
    usage = Usage(input_tokens=10, cache_read_input_tokens=prompt_tokens - 10, output_tokens=200)
    return AssistantMessage(message_id=f"m{n}", content=[TextBlock(text=f"step {n}")], usage=usage)


def _compacted(*prompts: int, summary_output: int | None = 4_000) -> list[Message]:
    """A history that has just been compacted: its boundary and summary, then replies whose
    prompts held `prompts` tokens."""
    metadata: dict[str, object] = {"trigger": "auto", "preTokens": 90_000}
    if summary_output is not None:
        metadata["summaryOutputTokens"] = summary_output
    history: list[Message] = [
        UserMessage(content="the first prompt"),
        _reply(90_000, 0),
        SystemMessage(subtype="compact_boundary", content="Conversation compacted", metadata=metadata),
        UserMessage(content="summary of it all", is_compact_summary=True),
    ]
    for n, tokens in enumerate(prompts, start=1):
        history += [UserMessage(content=f"go on {n}"), _reply(tokens, n)]
    return history


def _action(history: list[Message], state: PipelineState) -> object:
    """What the autocompact check asks for before the request after `history`, the size of the
    last reply's prompt (the boundary slice derives the last compaction from the history)."""
    Pipeline([BoundarySlice()], state).project(history)
    reply = history[-1]
    assert isinstance(reply, AssistantMessage) and reply.usage is not None
    return Autocompact().check(reply.usage.total_input(), state)


def test_right_after_a_compaction_the_cost_trigger_waits_for_the_view_to_grow():
    # 120 replies into a session, compacted to 40K three replies ago, now 50K: the old trigger
    # (as many requests left as made, a 19K compacted view) compacted again here, and again
    # after each compaction (the spiral).
    history = _compacted(40_000, 45_000, 50_000)
    assert _action(history, _state(responses=120)) is None
    # The threshold still compacts whatever the last compaction was.
    assert _action(_compacted(40_000, 167_000), _state(responses=120)) == Compact("auto")


def test_the_cost_trigger_fires_again_once_the_view_has_grown_enough_to_pay():
    # In a 1M window, compacted to 40K a hundred replies ago and grown to 400K since, with 300
    # replies made: the reads saved before the threshold pay for the next compaction many times.
    prompts = [40_000 + 3_600 * n for n in range(101)]
    assert _action(_compacted(*prompts), _state(window=1_000_000, responses=300)) == Compact("auto")


def test_no_compaction_until_the_first_reply_after_one_measured_the_compacted_view():
    history = _compacted()
    history.append(UserMessage(content="go on"))
    state = _state(window=1_000_000, responses=300)
    Pipeline([BoundarySlice()], state).project(history, dry_run=True)
    assert state.compaction.last is None  # a dry run works on a copy
    Pipeline([BoundarySlice()], state).project(history)
    assert state.compaction.last is not None and state.compaction.last.after_tokens is None
    assert Autocompact().check(400_000, state) is None


def test_the_summary_is_counted_at_a_real_summarys_size():
    state = _state(responses=60)
    # No compaction yet: about 4K output tokens, as real summaries of a full view take (the old
    # trigger assumed a fiftieth of the view, at least 2K: 2K at 100K).
    assert summary_output_estimate(100_000, state) == SUMMARY_OUTPUT_ESTIMATE == 4_000
    # After one, what that summary really took.
    Pipeline([BoundarySlice()], state).project(_compacted(30_000, summary_output=6_500))
    assert summary_output_estimate(100_000, state) == 6_500
    # A compaction from session memory took no model call: the estimate stays the default.
    Pipeline([BoundarySlice()], state).project(_compacted(30_000, summary_output=None))
    assert summary_output_estimate(100_000, state) == 4_000


def test_the_compaction_cost_counts_the_summary_request_the_summary_and_the_rewrite():
    # The summary request reads 100K (10K units), 4K of summary at 5x (20K), the new view's 30K
    # of messages written at 1.25x instead of read at 0.1x (34.5K); the 10K of system prompt
    # and tools stay cached.
    assert compaction_cost(100_000, 40_000, 10_000, 4_000, read=0.1, write=1.25, output=5.0) == 64_500
    # With the hour's lifetime the rewrite costs 2x.
    assert compaction_cost(100_000, 40_000, 10_000, 4_000, read=0.1, write=2.0, output=5.0) == 87_000


def test_a_one_hour_cache_makes_the_rewrite_dearer():
    state = _state()
    assert cache_write_multiplier(state) == 1.25
    state.config.cache_ttl = "1h"
    assert cache_write_multiplier(state) == 2.0


def test_the_requests_expected_never_pass_the_threshold():
    # 500 requests made, 5K under the threshold, growing 2K a request: two and a half requests
    # before the threshold compacts anyway, whatever the session's length says.
    horizon = requests_before_threshold(162_000, 167_000, 2_000)
    assert horizon == 2.5
    assert 2.4 < expected_requests(500, horizon) <= horizon
    # Early in a session the odds it goes on are small: 5 requests made, 100 before the threshold.
    assert expected_requests(5, 100) < 16
    assert expected_requests(0, 100) == 0


def test_near_the_threshold_the_cost_trigger_leaves_it_to_the_threshold():
    # 160K of a 200K window (the threshold is 167K), 50 replies made, growing 3.2K a reply: the
    # old trigger took 50 more requests at 160K and compacted; two are left before the threshold.
    state = _state(responses=50)
    assert Autocompact().check(160_000, state) is None
    assert Autocompact().check(167_000, state) == Compact("auto")
