"""The tool-result budget on hand-built histories (docs/architecture.md 5.2)."""

from __future__ import annotations

from pathlib import Path

from agent_repl.context.boundary import BoundarySlice
from agent_repl.context.budget import ToolResultBudget
from agent_repl.context.projector import Pipeline
from agent_repl.context.resume import rebuild_state
from agent_repl.context.rounds import ConversationIndex
from agent_repl.context.state import PipelineConfig, PipelineState
from agent_repl.core.model.messages import (
    AssistantMessage,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from agent_repl.core.tooling.persisted_output import PERSISTED_OUTPUT_TAG
from agent_repl.transcript.records import ContentReplacementRecord

BUDGET = 1_000


def call(tool_use_id: str, message_id: str, name: str = "Bash") -> AssistantMessage:
    return AssistantMessage(message_id=message_id, content=[ToolUseBlock(id=tool_use_id, name=name, input={})])


def result(tool_use_id: str, size: int, char: str = "x") -> UserMessage:
    return UserMessage(content=[ToolResultBlock(tool_use_id=tool_use_id, content=char * size)])


def pipeline(tmp_path: Path, state: PipelineState | None = None) -> Pipeline:
    state = state or PipelineState(config=PipelineConfig(tool_result_budget_chars=BUDGET))
    return Pipeline([BoundarySlice(), ToolResultBudget(tmp_path / "tool-results")], state)


def wire_results(projection) -> dict[str, str]:
    return {
        b["tool_use_id"]: b["content"]
        for m in projection.wire
        if m["role"] == "user"
        for b in m["content"]
        if b["type"] == "tool_result"
    }


def parallel_turn() -> list:
    # One reply split into three entries sharing its message_id, and three results stored as three entries.
    return [
        UserMessage(content="go"),
        call("a", "m1"),
        call("b", "m1"),
        call("c", "m1"),
        result("a", 300),
        result("b", 600),
        result("c", 500),
    ]


def test_parallel_results_stored_as_n_entries_are_budgeted_as_one_wire_message(tmp_path):
    history = parallel_turn()
    assert ConversationIndex(history).wire_groups() == [[0], [4, 5, 6]]
    p = pipeline(tmp_path)
    projection = p.project(history)
    results = wire_results(projection)
    # 1,400 chars over a 1,000 budget: only the largest (b, 600) goes, leaving 800.
    assert results["b"].startswith(PERSISTED_OUTPUT_TAG)
    assert not results["a"].startswith(PERSISTED_OUTPUT_TAG) and not results["c"].startswith(PERSISTED_OUTPUT_TAG)
    [record] = projection.records
    assert isinstance(record, ContentReplacementRecord) and record.tool_use_id == "b"
    assert (tmp_path / "tool-results" / "b.txt").read_text() == "x" * 600
    # The history is untouched.
    assert history[5].tool_results()[0].content == "x" * 600


def test_a_split_message_id_with_results_between_its_blocks_is_still_one_group(tmp_path):
    history = [UserMessage(content="go"), call("a", "m1"), result("a", 700), call("b", "m1"), result("b", 700)]
    assert ConversationIndex(history).wire_groups() == [[0], [2, 4]]
    projection = pipeline(tmp_path).project(history)
    replaced = [tid for tid, text in wire_results(projection).items() if text.startswith(PERSISTED_OUTPUT_TAG)]
    assert len(replaced) == 1


def test_frozen_results_are_never_touched_and_their_overage_is_accepted(tmp_path):
    p = pipeline(tmp_path)
    history = [UserMessage(content="go"), call("a", "m1"), result("a", 900)]
    assert not p.project(history).records  # under budget: seen, frozen from now on
    history += [call("b", "m1"), result("b", 900)]
    projection = p.project(history)
    results = wire_results(projection)
    assert results["a"].startswith("x" * 900)  # frozen: never replaced later
    assert results["b"].startswith(PERSISTED_OUTPUT_TAG)  # fresh: replaced to fit
    # Frozen alone over the budget: accepted, nothing replaced.
    p2 = pipeline(tmp_path)
    p2.state.budget.seen = {"a", "b"}
    assert not p2.project(history).records


def test_images_persisted_previews_and_unlimited_tools_are_skipped(tmp_path):
    image = ImageBlock(source={"type": "base64", "media_type": "image/png", "data": "AAAA"})
    history = [
        UserMessage(content="go"),
        call("img", "m1"),
        call("prev", "m1"),
        call("read", "m1", name="Read"),
        call("big", "m1"),
        UserMessage(content=[ToolResultBlock(tool_use_id="img", content=[TextBlock(text="y" * 900), image])]),
        UserMessage(content=[ToolResultBlock(tool_use_id="prev", content=PERSISTED_OUTPUT_TAG + "z" * 900)]),
        result("read", 900),
        result("big", 400),
    ]
    projection = pipeline(tmp_path).project(history)
    assert [r.tool_use_id for r in projection.records] == ["big"]


def test_dry_run_decides_the_same_and_changes_nothing(tmp_path):
    history = parallel_turn()
    p = pipeline(tmp_path)
    dry = p.project(history, dry_run=True)
    # The same run on a copy of the state: the same decisions, none of them kept, no file written.
    assert not p.state.budget.seen and not p.state.budget.replacements and not (tmp_path / "tool-results").exists()
    real = p.project(history)
    assert dry.wire == real.wire and real.records
    assert [(r.tool_use_id, r.replacement) for r in dry.records] == [(r.tool_use_id, r.replacement) for r in real.records]
    assert (tmp_path / "tool-results").is_dir()


def test_replacement_is_re_emitted_byte_for_byte_after_resume_from_records(tmp_path):
    history = parallel_turn()
    first = pipeline(tmp_path)
    before = first.project(history)
    records = before.records
    # A resumed session: new state from the records alone, the tool-results file deleted meanwhile.
    (tmp_path / "tool-results" / "b.txt").unlink()
    state = rebuild_state(PipelineState(config=PipelineConfig(tool_result_budget_chars=BUDGET)), history, records)
    after = pipeline(tmp_path, state).project(history)
    assert after.wire == before.wire
    assert not after.records
    # Even a tampered record string is what goes out: the record, not a recomputation, is the truth.
    tampered = [ContentReplacementRecord(tool_use_id="b", replacement="RECORDED TEXT")]
    state = rebuild_state(PipelineState(config=PipelineConfig(tool_result_budget_chars=BUDGET)), history, tampered)
    assert wire_results(pipeline(tmp_path, state).project(history))["b"].startswith("RECORDED TEXT")


def test_the_budget_follows_the_window_and_a_small_one_budgets_unlimited_tools_too(tmp_path):
    config = PipelineConfig()
    config.set_window(200_000)
    assert (config.effective_window, config.tool_result_budget_chars, config.unlimited_tools_exempt) == (
        180_000,
        200_000,
        True,
    )
    config.set_window(1_000_000)
    assert config.tool_result_budget_chars == 200_000 and config.unlimited_tools_exempt
    config.set_window(50_000)
    assert (config.effective_window, config.tool_result_budget_chars, config.unlimited_tools_exempt) == (
        45_000,
        50_000,
        False,
    )
    # Two Reads of 30,000 characters each fit a 200K window's budget; a 50K window sends the larger as a preview.
    history = [UserMessage(content="go"), call("r1", "m1", name="Read"), call("r2", "m1", name="Read"), result("r1", 30_000), result("r2", 31_000)]
    small = pipeline(tmp_path / "small", PipelineState(config=config))
    assert [r.tool_use_id for r in small.project(history).records] == ["r2"]
    large = PipelineConfig()
    large.set_window(200_000)
    assert pipeline(tmp_path / "large", PipelineState(config=large)).project(history).records == []
