"""Records as the one way the pipeline's state changes: live, on resume, and on a copy for dry runs."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime, timedelta

from agent_repl.context.boundary import BoundarySlice
from agent_repl.context.budget import ToolResultBudget
from agent_repl.context.microcompact import Microcompact
from agent_repl.context.projector import Pipeline
from agent_repl.context.records import apply
from agent_repl.context.resume import rebuild_state
from agent_repl.context.state import PipelineConfig, PipelineState
from agent_repl.core.model.messages import (
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    iso_timestamp,
)
from agent_repl.transcript.records import (
    CacheEditRecord,
    CollapseCommitRecord,
    CompactionUndoRecord,
    ContentReplacementRecord,
    MicrocompactClearRecord,
    RewindRecord,
    ServerClearRecord,
    SideRecordRegistry,
    SnipRecord,
)
from tests.context.declared_tools import with_declared_tools

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def history(n: int = 8) -> list:
    """A turn of `n` Bash calls (some large), answered long ago: over the budget and past the cache's life."""
    messages: list = [UserMessage(content="start", timestamp=iso_timestamp(T0))]
    for i in range(n):
        messages.append(
            AssistantMessage(
                message_id=f"m{i}",
                content=[ToolUseBlock(id=f"t{i}", name="Bash", input={"i": i})],
                timestamp=iso_timestamp(T0 + timedelta(seconds=i)),
            )
        )
        size = 3_000 if i % 3 == 0 else 200
        messages.append(UserMessage(content=[ToolResultBlock(tool_use_id=f"t{i}", content="x" * size)]))
    messages.append(AssistantMessage(message_id="end", content=[TextBlock(text="done")], timestamp=iso_timestamp(T0)))
    messages.append(UserMessage(content="next question"))
    return messages


def decisions(state: PipelineState) -> dict:
    """Everything a record or the stages' bookkeeping can change."""
    parts = ("budget", "snip", "microcompact", "compaction", "collapse")
    return {name: asdict(getattr(state, name)) for name in parts} | {
        "rewound": set(state.rewound),
        "pending_estimate": state.tokens.pending_estimate,
    }


def pipeline(tmp_path, state: PipelineState | None = None) -> Pipeline:
    now = T0 + timedelta(minutes=62)
    config = with_declared_tools(PipelineConfig(tool_result_budget_chars=2_500))
    state = state or PipelineState(config=config, clock=lambda: now)
    return Pipeline([BoundarySlice(), ToolResultBudget(tmp_path / "tool-results"), Microcompact()], state)


def test_a_dry_run_decides_what_the_live_run_does_and_leaves_the_state_and_the_disk_alone(tmp_path):
    p, h = pipeline(tmp_path), history()
    before = decisions(p.state)
    dry = p.project(h, dry_run=True)
    assert decisions(p.state) == before and not (tmp_path / "tool-results").exists()
    live = p.project(h)
    kinds = {type(r) for r in live.records}
    assert kinds == {ContentReplacementRecord, MicrocompactClearRecord}
    assert dry.wire == live.wire and dry.estimated_tokens == live.estimated_tokens
    assert [r.to_json() | {"timestamp": ""} for r in dry.records] == [r.to_json() | {"timestamp": ""} for r in live.records]
    assert decisions(p.state) != before and any((tmp_path / "tool-results").iterdir())


def test_resume_applies_the_written_records_to_the_same_decisions(tmp_path):
    live, h = pipeline(tmp_path), history()
    projection = live.project(h)
    registry = SideRecordRegistry()
    written = [registry.parse(r.to_json()) for r in projection.records]
    resumed = rebuild_state(PipelineState(config=live.state.config, clock=live.state.clock), h, written)
    assert resumed.budget.replacements == live.state.budget.replacements
    assert resumed.microcompact.cleared == live.state.microcompact.cleared
    again = pipeline(tmp_path, resumed).project(h)
    assert again.wire == projection.wire and not again.records


def test_a_copy_of_the_state_takes_records_without_touching_the_original():
    state = PipelineState()
    state.budget.seen.add("t0")
    before = decisions(state)
    trial = state.copy()
    for record in (
        ContentReplacementRecord(tool_use_id="t0", replacement="preview"),
        SnipRecord(uuids=["u1"], source="user", tokens_freed=10),
        CacheEditRecord(anchor_uuid="u2", tool_use_ids=["t1"]),
        ServerClearRecord(tool_use_ids=["t2", "t3"], tokens_saved=10, sizes={"t2": 7, "t3": 3}),
        CollapseCommitRecord(collapse_id="c", start_uuid="u3", end_uuid="u4", summary="s", uuids=frozenset({"u3", "u4"})),
        CompactionUndoRecord(boundary_uuid="b", excluded_uuids=["b", "s"]),
        RewindRecord(prompt_uuid="p", restore="conversation", excluded_uuids=["p"]),
    ):
        apply(trial, record)
    trial.budget.seen.add("t9")
    assert decisions(state) == before
    assert trial.microcompact.server_cleared == {"t2": 7, "t3": 3} and trial.collapse.owner == {"u3": "c", "u4": "c"}
    assert trial.facts is state.facts and trial.config is state.config


def test_what_only_the_live_run_knows_is_never_written():
    # The transcript keeps its format: a resume splits the batch's tokens evenly and reads a
    # collapsed span's entries from the history.
    clear = ServerClearRecord(tool_use_ids=["t2", "t3"], tokens_saved=10, trigger="pays", sizes={"t2": 7, "t3": 3})
    commit = CollapseCommitRecord(collapse_id="c", start_uuid="u3", end_uuid="u4", summary="s", uuids=frozenset({"u3"}))
    assert set(clear.to_json()) == {"type", "sessionId", "timestamp", "toolUseIds", "tokensSaved", "trigger"}
    assert set(commit.to_json()) == {"type", "sessionId", "timestamp", "collapseId", "startUuid", "endUuid", "summary"}
    registry = SideRecordRegistry()
    read_back = registry.parse(clear.to_json())
    assert isinstance(read_back, ServerClearRecord) and read_back.sizes is None
    state = PipelineState()
    apply(state, read_back)
    assert state.microcompact.server_cleared == {"t2": 5, "t3": 5}
