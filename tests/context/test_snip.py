"""Snip's planner and its automatic stage on hand-built histories (docs/architecture.md 5.3)."""

from __future__ import annotations

from agent_repl.context.boundary import BoundarySlice
from agent_repl.context.estimate import estimate_messages, estimate_request, token_count_with_estimation
from agent_repl.context.ids import short_id
from agent_repl.context.normalize import INTERRUPTED_TOOL_RESULT
from agent_repl.context.projector import Pipeline
from agent_repl.context.records import apply
from agent_repl.context.resume import rebuild_state
from agent_repl.context.snip import SnipError, SnipPlan, SnipStage, apply_snip, plan_snip
from agent_repl.context.state import PinnedCacheEdit, PipelineConfig, PipelineState
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from agent_repl.transcript.records import SnipRecord
from tests.context.declared_tools import with_declared_tools

from .sent import stamp_as_sent

BIG = "alpha beta gamma delta " * 100


def prompt(text: str) -> UserMessage:
    return UserMessage(content=text)


def call(tool_use_id: str, name: str = "Read", tool_input: dict | None = None) -> AssistantMessage:
    block = ToolUseBlock(
        id=tool_use_id, name=name, input=tool_input or {"file_path": f"/src/{tool_use_id}.py"}
    )
    return AssistantMessage(message_id=f"msg-{tool_use_id}", content=[block])


def result(tool_use_id: str, text: str = "ok", *, is_error: bool = False) -> UserMessage:
    return UserMessage(content=[ToolResultBlock(tool_use_id=tool_use_id, content=text, is_error=is_error)])


def reply(text: str, message_id: str) -> AssistantMessage:
    return AssistantMessage(message_id=message_id, content=[TextBlock(text=text)])


def history() -> list[Message]:
    return [
        UserMessage(content="<env>cwd: /src</env>", is_meta=True),  # 0
        prompt("read the two files"),  # 1
        call("a"),  # 2
        result("a", BIG),  # 3
        call("b", "Bash", {"command": "ls"}),  # 4
        result("b", "a.py b.py"),  # 5
        SystemMessage(subtype="informational", content="a note for the user"),  # 6
        reply("Both read.", "r1"),  # 7
        prompt("now fix the bug"),  # 8: the current turn starts here
        call("c"),  # 9
        result("c", "fixed"),  # 10
    ]


def uuids(view: list[Message], *indexes: int) -> tuple[str, ...]:
    return tuple(view[i].uuid for i in indexes)


def plan(view: list[Message], state: PipelineState, start: str, end: str | None = None) -> SnipPlan:
    outcome = plan_snip(view, state, start, end)
    assert isinstance(outcome, SnipPlan), outcome
    return outcome


def error(view: list[Message], state: PipelineState, start: str, end: str | None = None) -> SnipError:
    outcome = plan_snip(view, state, start, end)
    assert isinstance(outcome, SnipError), outcome
    return outcome


def test_a_tool_result_id_takes_its_call_along_and_counts_the_tokens():
    view, state = history(), PipelineState()
    snip = plan(view, state, short_id(view[3].uuid))
    assert snip.uuids == uuids(view, 2, 3)
    assert snip.tool_calls == 1
    assert snip.tokens_freed == estimate_messages([view[2], view[3]], state) > 100


def test_a_call_named_by_uuid_takes_its_result_along():
    view, state = history(), PipelineState()
    assert plan(view, state, view[4].uuid).uuids == uuids(view, 4, 5)


def test_a_range_is_inclusive_in_view_order_and_skips_system_entries():
    view, state = history(), PipelineState()
    snip = plan(view, state, f"[id:{short_id(view[1].uuid)}]", short_id(view[5].uuid).upper())
    assert snip.uuids == uuids(view, 1, 2, 3, 4, 5)
    # A range ending on the reply: the system note inside it stays.
    whole = plan(view, state, short_id(view[1].uuid), view[7].uuid)
    assert whole.uuids == uuids(view, 1, 2, 3, 4, 5, 7)


def test_a_range_ending_on_a_call_takes_that_calls_result_past_the_end():
    view, state = history(), PipelineState()
    assert plan(view, state, short_id(view[1].uuid), view[4].uuid).uuids == uuids(view, 1, 2, 3, 4, 5)


def test_the_current_turn_cannot_be_snipped():
    view, state = history(), PipelineState()
    for ref in (short_id(view[8].uuid), short_id(view[10].uuid), view[9].uuid):
        refused = error(view, state, ref)
        assert (
            "current turn" in refused.model_message and refused.user_message == "cannot snip the current turn"
        )
    assert "current turn" in error(view, state, short_id(view[1].uuid), short_id(view[10].uuid)).model_message


def test_a_call_whose_result_is_in_the_current_turn_is_refused():
    view = history()
    late = result("a", "arrived late")
    view.insert(9, late)  # the result of call "a" stored after the new prompt
    view.pop(3)
    refused = error(view, PipelineState(), view[2].uuid)
    assert "current turn" in refused.model_message


def test_unknown_reversed_and_empty_are_refused_with_two_messages():
    view, state = history(), PipelineState()
    unknown = error(view, state, "zzzzzz")
    assert "zzzzzz" in unknown.model_message and "[id:" in unknown.model_message
    assert unknown.user_message == "no message 'zzzzzz' in the current view"
    # The meta entry has no [id:] tag, so its short id names nothing.
    error(view, state, short_id(view[0].uuid))
    reversed_range = error(view, state, short_id(view[5].uuid), short_id(view[1].uuid))
    assert "reversed" in reversed_range.model_message
    assert reversed_range.user_message == "the end of the range comes before its start"
    nothing = error(view, state, view[6].uuid)
    assert nothing.user_message == "nothing to snip there"


def test_apply_updates_the_state_and_the_next_view_has_no_orphans():
    view = history()
    state = PipelineState()
    snip = plan(view, state, short_id(view[3].uuid))
    record = apply_snip(state, snip, "model", "digested")
    expected = SnipRecord(
        uuids=list(uuids(view, 2, 3)), source="model", tokens_freed=snip.tokens_freed, reason="digested"
    )
    # Records are stamped when made; compare everything else.
    assert record.model_dump(exclude={"timestamp"}) == expected.model_dump(exclude={"timestamp"})
    assert state.snip.snipped == set(uuids(view, 2, 3))
    assert state.snip.tokens_freed_total == snip.tokens_freed
    projection = Pipeline([BoundarySlice()], state).project(view, dry_run=True)
    assert [m.uuid for m in projection.view] == [m.uuid for i, m in enumerate(view) if i not in (2, 3)]
    text = str(projection.wire)
    assert BIG[:50] not in text and "'a'" not in text and INTERRUPTED_TOOL_RESULT not in text
    # Snipping it again says so.
    again = error(projection.view, state, short_id(view[3].uuid))
    assert "already snipped" in again.model_message


def test_after_a_snip_the_stale_usage_is_no_anchor():
    # The usage described the view with the snipped entries in it: the estimate starts afresh.
    view = history()
    state = PipelineState()
    stamp_as_sent(Pipeline([BoundarySlice()], state), view)
    state.tokens.last_usage = Usage(input_tokens=40_000, output_tokens=200)
    state.tokens.last_usage_anchor = view[7].uuid
    Pipeline([BoundarySlice()], state).project(view)
    before = token_count_with_estimation(view, state)
    assert before == 40_200 + estimate_messages(view[8:], state)
    snip = plan(view, state, short_id(view[3].uuid))
    assert snip.tokens_in_last_usage == snip.tokens_freed
    apply_snip(state, snip, "user")
    after_view = Pipeline([BoundarySlice()], state).project(view).view
    assert token_count_with_estimation(after_view, state) == estimate_request(after_view, state)
    # The next usage sees the snip itself: nothing is subtracted any more.
    Pipeline([BoundarySlice()], state).observe_response(Usage(input_tokens=30_000), anchor_uuid=view[10].uuid)
    assert state.snip.tokens_freed_since_usage == 0


def test_resume_rebuilds_the_snipped_set_from_the_records():
    view = history()
    live = PipelineState()
    records = [apply_snip(live, plan(view, live, short_id(view[3].uuid)), "model")]
    records.append(apply_snip(live, plan(view, live, short_id(view[5].uuid)), "user"))
    resumed = rebuild_state(PipelineState(), view, records)
    assert resumed.snip.snipped == live.snip.snipped == set(uuids(view, 2, 3, 4, 5))
    assert resumed.snip.tokens_freed_total == live.snip.tokens_freed_total
    wire_live = Pipeline([BoundarySlice()], live).project(view, dry_run=True).wire
    assert Pipeline([BoundarySlice()], resumed).project(view, dry_run=True).wire == wire_live


# The automatic stage.


def long_history(old_reads: int) -> list[Message]:
    view: list[Message] = [prompt("survey the code")]
    for i in range(old_reads):
        view += [call(f"r{i}"), result(f"r{i}", f"file {i}\n" + BIG)]
    view += [reply("Surveyed.", "done"), prompt("and now?"), call("now"), result("now", BIG)]
    return view


def over_threshold_state(view: list[Message], **config: object) -> PipelineState:
    state = PipelineState(config=with_declared_tools(PipelineConfig(**config)))  # type: ignore[arg-type]
    state.config.auto_snip_threshold = 0.5
    state.config.effective_window = int(token_count_with_estimation(view, state) / 0.5) - 10
    return state


def test_below_the_threshold_the_stage_does_nothing():
    view = long_history(12)
    state = PipelineState()
    outcome = SnipStage().apply(view, state)
    assert outcome.view is view and outcome.records == [] and outcome.saved_tokens == 0
    assert state.snip.snipped == set()


def test_over_the_threshold_old_results_go_oldest_first_until_under_ninety_percent():
    view = long_history(14)
    state = over_threshold_state(view)
    threshold = state.config.auto_snip_threshold * state.config.effective_window
    before = token_count_with_estimation(view, state)
    outcome = SnipStage(keep_recent=10).apply(view, state)
    [record] = outcome.records
    assert record.source == "auto" and record.tokens_freed == outcome.saved_tokens
    snipped = [i for i, m in enumerate(view) if m.uuid in set(record.uuids)]
    # Whole pairs, the oldest first, only as many as needed.
    assert snipped == list(range(1, 1 + len(snipped))) and len(snipped) % 2 == 0
    after = token_count_with_estimation(outcome.view, state)
    assert after == before - outcome.saved_tokens
    assert after < 0.9 * threshold
    one_fewer = estimate_messages([view[snipped[-2]], view[snipped[-1]]], state)
    assert after + one_fewer >= 0.9 * threshold
    assert outcome.items == len(snipped) // 2
    apply(state, record)
    assert state.snip.snipped == set(record.uuids)


def test_the_newest_results_and_the_current_turn_are_never_taken():
    view = long_history(12)
    state = over_threshold_state(view)
    state.config.effective_window //= 4  # far over: take everything that is allowed
    outcome = SnipStage(keep_recent=10).apply(view, state)
    [record] = outcome.records
    # 13 results: the 10 newest include the current turn's; only the 3 oldest pairs may go.
    assert set(record.uuids) == {m.uuid for m in view[1:7]}


def test_a_failed_call_later_done_right_goes_and_an_unanswered_failure_stays():
    view: list[Message] = [
        prompt("run the tests"),
        call("f1", "Bash", {"command": "pytest -q tests/unit"}),  # 1
        result("f1", "ERROR: file or directory not found: tests/unit\n" + BIG, is_error=True),  # 2
        call("f2", "Bash", {"command": "make deploy"}),  # 3
        result("f2", "make: *** No rule to make target 'deploy'.\n" + BIG, is_error=True),  # 4
        call("ok", "Bash", {"command": "pytest -q tests/units"}),  # 5
        result("ok", "12 passed"),  # 6
        reply("Tests pass.", "done"),
        prompt("thanks"),
    ]
    state = over_threshold_state(view, clearable_tools=frozenset({"Read"}))
    state.config.effective_window //= 4
    outcome = SnipStage().apply(view, state)
    [record] = outcome.records
    assert record.uuids == [view[1].uuid, view[2].uuid]


def test_a_dry_run_decides_the_same_and_changes_nothing():
    view = long_history(14)
    state = over_threshold_state(view)
    pipeline = Pipeline([BoundarySlice(), SnipStage()], state)
    dry = pipeline.project(view, dry_run=True)
    assert state.snip.snipped == set() and state.snip.tokens_freed_total == 0
    assert state.snip.tokens_freed_since_usage == 0
    real = pipeline.project(view)
    assert [m.uuid for m in dry.view] == [m.uuid for m in real.view] and dry.estimated_tokens == real.estimated_tokens
    assert [r.uuids for r in dry.records] == [r.uuids for r in real.records] and len(dry.view) < len(view)
    assert state.snip.snipped == set(real.records[0].uuids)


def test_the_pipeline_reports_the_stage_and_passes_its_record_on():
    view = long_history(14)
    state = over_threshold_state(view)
    projection = Pipeline([BoundarySlice(), SnipStage()], state).project(view)
    [record] = projection.records
    assert isinstance(record, SnipRecord)
    [report] = [r for r in projection.reports if r.stage == "snip"]
    assert report.tokens_before - report.tokens_after == record.tokens_freed
    # Next turn the boundary slice already filters them; the stage has nothing more to do.
    again = Pipeline([BoundarySlice(), SnipStage()], state).project(view)
    assert again.records == [] and {m.uuid for m in again.view}.isdisjoint(record.uuids)


def test_the_view_may_not_be_left_opening_with_a_reply():
    view = history()[1:]  # no meta context entry: the first prompt opens the view
    refused = error(view, PipelineState(), short_id(view[0].uuid))
    assert refused.user_message == "the view would start with an assistant reply"
    # With the replies that follow, the next prompt opens the view: fine.
    assert plan(view, PipelineState(), short_id(view[0].uuid), view[6].uuid).uuids == uuids(
        view, 0, 1, 2, 3, 4, 6
    )


def test_results_microcompact_already_handled_and_cache_edit_anchors_are_left_alone():
    view = long_history(12)
    state = over_threshold_state(view)
    state.config.effective_window //= 4
    state.microcompact.cleared["r0"] = "[Old tool result content cleared]"
    state.microcompact.deleted.add("r1")
    state.microcompact.pinned.append(PinnedCacheEdit(anchor_uuid=view[6].uuid, tool_use_ids=["r1"]))
    outcome = SnipStage(keep_recent=10).apply(view, state)
    # r0 was cleared, r1 deleted from the cache, r2's result carries the pinned edit: nothing is left.
    assert outcome.view is view and outcome.detail == "over the threshold, nothing snip-safe"


def test_while_autocompact_is_on_the_automatic_snip_stands_aside():
    # The compaction that follows is the one rewrite of the cached prefix; a snip first would be a second.
    view = long_history(14)
    state = over_threshold_state(view)
    state.config.autocompact_on = True
    outcome = SnipStage(keep_recent=10).apply(view, state)
    assert outcome.view is view and outcome.records == [] and state.snip.snipped == set()
    # Autocompact off (settings, or its circuit breaker opened): the snip keeps the session going.
    state.config.autocompact_on = False
    assert SnipStage(keep_recent=10).apply(view, state).records
