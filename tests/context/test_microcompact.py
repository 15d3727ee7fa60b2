"""Microcompact on hand-built histories (docs/architecture.md 5.4)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from agent_repl.context.boundary import BoundarySlice
from agent_repl.context.estimate import text_cl100k
from agent_repl.context.microcompact import Microcompact
from agent_repl.context.projector import Pipeline
from agent_repl.context.resume import rebuild_state
from agent_repl.context.state import CLEARED_TOOL_RESULT, PipelineConfig, PipelineState
from agent_repl.core.api.betas import CACHE_EDITING_BETA, CONTEXT_MANAGEMENT_BETA
from agent_repl.core.model.messages import (
    AssistantMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
    iso_timestamp,
)
from agent_repl.transcript.records import CacheEditRecord, MicrocompactClearRecord
from tests.context.declared_tools import with_declared_tools

from .sent import stamp_as_sent

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def history_with_results(n: int, *, name: str = "Read") -> list:
    messages: list = [UserMessage(content="start", timestamp=iso_timestamp(T0))]
    for i in range(n):
        messages.append(
            AssistantMessage(
                message_id=f"m{i}",
                content=[ToolUseBlock(id=f"t{i}", name=name, input={"i": i})],
                timestamp=iso_timestamp(T0 + timedelta(seconds=i)),
            )
        )
        messages.append(UserMessage(content=[ToolResultBlock(tool_use_id=f"t{i}", content=f"result {i} " * 50)]))
    messages.append(
        AssistantMessage(message_id="end", content=[TextBlock(text="done")], timestamp=iso_timestamp(T0 + timedelta(minutes=1)))
    )
    messages.append(UserMessage(content="next question"))
    return messages


def make(config: PipelineConfig, now: datetime) -> Pipeline:
    return Pipeline([BoundarySlice(), Microcompact()], PipelineState(config=with_declared_tools(config), clock=lambda: now))


def results_in(wire: list[dict]) -> dict[str, dict]:
    return {b["tool_use_id"]: b for m in wire if m["role"] == "user" for b in m["content"] if b["type"] == "tool_result"}


def test_time_based_clears_all_but_the_five_most_recent_and_records_it():
    history = history_with_results(8)
    p = make(PipelineConfig(), T0 + timedelta(minutes=62))
    projection = p.project(history)
    results = results_in(projection.wire)
    cleared = [tid for tid, b in results.items() if b["content"].startswith(CLEARED_TOOL_RESULT)]
    assert cleared == ["t0", "t1", "t2"]
    [record] = projection.records
    assert isinstance(record, MicrocompactClearRecord) and record.tool_use_ids == cleared and record.trigger == "time"
    [boundary] = projection.new_messages
    assert boundary.subtype == "microcompact_boundary" and boundary.metadata["compactedToolIds"] == cleared
    assert boundary.metadata["tokensSaved"] > 0
    # History untouched; the next turn re-applies the clear without recording it again.
    assert history[2].tool_results()[0].content.startswith("result 0")
    again = p.project(history)
    assert not again.records and results_in(again.wire)["t0"]["content"].startswith(CLEARED_TOOL_RESULT)


def test_no_time_based_clear_within_the_gap_or_in_a_dry_run():
    history = history_with_results(8)
    # The fixed rule: a 60-minute gap. By default the clear waits only until what the last
    # request cached has expired (5 minutes), since the next request writes it again anyway.
    assert not make(PipelineConfig(clear_at_expiry=False), T0 + timedelta(minutes=30)).project(history).records
    assert not make(PipelineConfig(), T0 + timedelta(minutes=4)).project(history).records
    assert make(PipelineConfig(), T0 + timedelta(minutes=6)).project(history).records
    p = make(PipelineConfig(), T0 + timedelta(minutes=62))
    dry = p.project(history, dry_run=True)
    # A dry run decides the same on a copy of the state: this one keeps nothing.
    assert dry.records and not p.state.microcompact.cleared and not p.state.microcompact.freed_since_usage
    assert results_in(dry.wire)["t0"]["content"].startswith(CLEARED_TOOL_RESULT)
    assert p.project(history).wire == dry.wire and p.state.microcompact.cleared


def test_time_based_clear_resets_the_cached_registry():
    p = make(PipelineConfig(cache_editing=True), T0 + timedelta(minutes=62))
    p.state.microcompact.deleted = {"t0"}
    p.state.microcompact.pinned = []
    p.project(history_with_results(8))
    assert not p.state.microcompact.deleted and not p.state.microcompact.pinned


def test_cached_microcompact_deletes_the_oldest_past_the_trigger_without_changing_content():
    config = with_declared_tools(PipelineConfig(cache_editing=True, cached_trigger=6, cached_keep=3))
    history = history_with_results(8)
    p = make(config, T0 + timedelta(minutes=2))
    projection = p.project(history)
    [record] = projection.records
    assert isinstance(record, CacheEditRecord)
    assert record.tool_use_ids == ["t0", "t1", "t2", "t3", "t4"]
    assert record.anchor_uuid == history[-1].uuid
    last = projection.wire[-1]["content"]
    assert last[-1] == {
        "type": "cache_edits",
        "edits": [{"type": "delete", "cache_reference": f"t{i}"} for i in range(5)],
    }
    results = results_in(projection.wire)
    assert all(b["cache_reference"] == tid for tid, b in results.items())
    assert results["t0"]["content"].startswith("result 0")  # the content itself is unchanged
    assert CACHE_EDITING_BETA in projection.betas
    # Pinned: later requests carry the same block at the same message, and nothing is re-deleted.
    history += [AssistantMessage(message_id="later", content=[TextBlock(text="ok")]), UserMessage(content="more")]
    later = p.project(history)
    assert not later.records
    assert later.wire[len(projection.wire) - 1] == projection.wire[-1]
    # The API's cumulative deleted count becomes a boundary with the saving.
    [boundary] = p.observe_response(
        Usage(input_tokens=10, cache_read_input_tokens=500, cache_deleted_input_tokens=400), anchor_uuid=history[-1].uuid
    )
    assert boundary.metadata["tokensSaved"] == 400 and boundary.metadata["compactedToolIds"] == record.tool_use_ids
    assert not p.observe_response(
        Usage(input_tokens=10, cache_read_input_tokens=500, cache_deleted_input_tokens=400), anchor_uuid=history[-1].uuid
    )
    # Resume rebuilds the pinned edit from its record.
    state = rebuild_state(PipelineState(config=config), history, [record])
    resumed = Pipeline([BoundarySlice(), Microcompact()], state)
    resumed.state.clock = lambda: T0 + timedelta(minutes=2)
    assert resumed.project(history).wire == later.wire


def test_without_cache_editing_the_public_context_management_edits_are_sent():
    history = history_with_results(2)
    projection = make(PipelineConfig(), T0 + timedelta(minutes=2)).project(history)
    assert projection.betas == [CONTEXT_MANAGEMENT_BETA]
    assert projection.body_extras["context_management"]["edits"] == [
        {
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": 100_000},
            "keep": {"type": "tool_uses", "value": 5},
        }
    ]
    # With thinking in the view, clear_thinking comes first: keep all, or only the last turn after an idle hour.
    history.insert(1, AssistantMessage(message_id="m0", content=[ThinkingBlock(thinking="hm", signature="s")],
                                      timestamp=iso_timestamp(T0)))
    busy = make(PipelineConfig(thinking_on=True), T0 + timedelta(minutes=2)).project(history)
    assert busy.body_extras["context_management"]["edits"][0] == {"type": "clear_thinking_20251015", "keep": "all"}
    idle = make(PipelineConfig(keep_recent_tool_results=100, thinking_on=True), T0 + timedelta(minutes=90)).project(
        history
    )
    assert idle.body_extras["context_management"]["edits"][0] == {
        "type": "clear_thinking_20251015",
        "keep": {"type": "thinking_turns", "value": 1},
    }


def test_with_autocompact_on_the_server_never_clears_tool_uses():
    # Past its trigger that edit moves the cache boundary on every request; the compaction is cheaper.
    history = history_with_results(2)
    assert make(PipelineConfig(autocompact_on=True), T0 + timedelta(minutes=2)).project(history).body_extras == {}
    history.insert(1, AssistantMessage(message_id="m0", content=[ThinkingBlock(thinking="hm", signature="s")],
                                      timestamp=iso_timestamp(T0)))
    thinking = make(PipelineConfig(autocompact_on=True, thinking_on=True), T0 + timedelta(minutes=2)).project(history)
    assert thinking.body_extras["context_management"]["edits"] == [{"type": "clear_thinking_20251015", "keep": "all"}]
    assert thinking.betas == [CONTEXT_MANAGEMENT_BETA]


def test_clear_thinking_is_never_sent_to_a_model_that_is_not_thinking():
    # A thinking block in view (made before a fallback or /model to a 4.x model) is not enough:
    # the API refuses clear_thinking with thinking off.
    history = history_with_results(2)
    history.insert(1, AssistantMessage(message_id="m0", content=[ThinkingBlock(thinking="hm", signature="s")],
                                      timestamp=iso_timestamp(T0)))
    off = make(PipelineConfig(autocompact_on=True, thinking_on=False), T0 + timedelta(minutes=90)).project(history)
    assert off.body_extras == {} and off.betas == []


def test_the_estimate_subtracts_results_deleted_after_the_last_usage():
    # The last usage still counts the results this request deletes from the cache; the API will not.
    config = with_declared_tools(PipelineConfig(cache_editing=True, cached_trigger=6, cached_keep=3))
    history = history_with_results(8)
    p = make(config, T0 + timedelta(minutes=2))
    stamp_as_sent(p, history)
    anchor = next(m for m in reversed(history) if isinstance(m, AssistantMessage))
    p.observe_response(Usage(input_tokens=10, cache_read_input_tokens=5_000), anchor_uuid=anchor.uuid)
    # The same view on a copy of the state whose trigger is never reached: nothing deleted.
    trial = p.state.copy()
    trial.config = replace(config, cached_trigger=100)
    untouched = p.preview(history, trial)
    projection = p.project(history)
    [microcompact] = [r for r in projection.reports if r.stage == "microcompact"]
    freed = microcompact.tokens_before - microcompact.tokens_after
    assert freed > 0 and p.state.microcompact.freed_since_usage == freed
    assert projection.estimated_tokens == untouched.estimated_tokens - freed
    # The next usage counts without them: nothing is subtracted twice.
    p.observe_response(Usage(input_tokens=10, cache_read_input_tokens=4_000), anchor_uuid=history[-1].uuid)
    assert p.state.microcompact.freed_since_usage == 0


def test_cached_microcompact_also_deletes_by_size_when_few_large_results_fill_the_window():
    history = history_with_results(8)  # about 150 tokens each: 1,200 live
    config = PipelineConfig(cache_editing=True, cached_trigger=100, effective_window=2_000)
    config.cached_trigger_share, config.cached_keep_share = 0.5, 0.25
    projection = make(config, T0 + timedelta(minutes=2)).project(history)
    [record] = projection.records
    deleted = record.tool_use_ids
    assert deleted == [f"t{i}" for i in range(len(deleted))]  # the oldest, in order
    state = PipelineState(config=config)
    sizes = [round(text_cl100k(f"result {i} " * 50, state) * state.tokens.ratio) for i in range(8)]
    assert sum(sizes) > 0.5 * 2_000
    live_after = sum(sizes[len(deleted) :])
    assert live_after <= 0.25 * 2_000 < live_after + sizes[len(deleted) - 1]  # no more than needed
    # Under half the window nothing happens; the size rule off, nothing happens either.
    assert not make(PipelineConfig(cache_editing=True, cached_trigger=100, effective_window=3_000,
                                   cached_trigger_share=0.5, cached_keep_share=0.25), T0).project(history).records
    assert not make(PipelineConfig(cache_editing=True, cached_trigger=100, effective_window=2_000,
                                   cached_trigger_share=0.0), T0).project(history).records


def test_the_clearable_tools_are_the_ones_that_declare_it_and_no_default_names_any(tmp_path):
    from agent_repl.bootstrap import build_pipeline
    from agent_repl.core.config.settings import Settings
    from agent_repl.tools import builtin_tools

    assert PipelineConfig().clearable_tools == frozenset()
    tools = builtin_tools()
    config = build_pipeline(Settings(), tmp_path, tools, tmp_path / "tool-results").state.config
    assert config.clearable_tools == {tool.name for tool in tools if tool.microcompact_clearable}
    assert build_pipeline(Settings(), tmp_path, [], tmp_path / "tool-results").state.config.clearable_tools == frozenset()
