"""Context collapse on hand-built histories (docs/architecture.md 5.5): projection, spans, thresholds, drain, resume."""

from __future__ import annotations

import json
from dataclasses import replace

from agent_repl.context.boundary import BoundarySlice
from agent_repl.context.collapse import (
    CollapseStage,
    drain_staged,
    should_commit,
    should_stage,
)
from agent_repl.context.collapse_spans import candidate_spans, make_span, placeholder_uuid
from agent_repl.context.estimate import estimate_request, token_count_with_estimation
from agent_repl.context.microcompact import Microcompact
from agent_repl.context.projector import Pipeline
from agent_repl.context.records import apply
from agent_repl.context.resume import rebuild_state
from agent_repl.context.rounds import ConversationIndex
from agent_repl.context.snip import snip_safe_spans
from agent_repl.context.state import PinnedCacheEdit, PipelineConfig, PipelineState
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from agent_repl.transcript.records import CollapseCommitRecord, CollapseStageRecord

BIG = "alpha beta gamma delta " * 100


def turn(i: int) -> list[Message]:
    """A typed prompt, a reply streamed as two entries (text, tool_use), its result, a closing reply."""
    return [
        UserMessage(content=f'Please check file {i}: does it still say "x = {i}"?\nThanks — ünïcode {i}'),
        AssistantMessage(message_id=f"m{i}", content=[TextBlock(text=f"Checking file {i}.")]),
        AssistantMessage(
            message_id=f"m{i}",
            content=[ToolUseBlock(id=f"t{i}", name="Bash", input={"command": f"cat /src/f{i}.py"})],
        ),
        UserMessage(
            content=[ToolResultBlock(tool_use_id=f"t{i}", content=BIG)], tool_use_result={"returnCode": 0}
        ),
        AssistantMessage(message_id=f"r{i}", content=[TextBlock(text=f"File {i} is fine.")]),
    ]


def history(turns: int = 10) -> list[Message]:
    entries: list[Message] = [UserMessage(content="<env>cwd: /src</env>", is_meta=True)]
    for i in range(turns):
        entries.extend(turn(i))
    return entries


def typed(view: list[Message]) -> list[str]:
    return [m.text() for m in view if isinstance(m, UserMessage) and not m.is_meta and not m.is_tool_result()]


def state_at(view: list[Message], share: float, **config: object) -> PipelineState:
    """A collapse state whose effective window puts `view` at `share` of it."""
    probe = PipelineState()
    effective = int(estimate_request(view, probe) / share)
    return PipelineState(config=PipelineConfig(strategy="collapse", effective_window=effective, **config))  # type: ignore[arg-type]


def snapshot(state: PipelineState) -> tuple:
    c = state.collapse
    return (list(c.commits), list(c.staged), dict(c.owner), c.freed_since_usage, c.freed_anchor)


def wire(pipeline: Pipeline, view: list[Message], *, dry_run: bool = False) -> str:
    return json.dumps(pipeline.project(view, dry_run=dry_run).wire)


def test_thresholds_are_pure_functions_of_numbers():
    assert not should_stage(7_999, 10_000) and should_stage(8_000, 10_000)
    assert not should_commit(8_999, 10_000) and should_commit(9_000, 10_000)


def test_autocompact_strategy_leaves_the_view_alone():
    view = history()
    state = state_at(view, 1.2)
    state.config.strategy = "autocompact"
    outcome = CollapseStage().apply(view, state)
    assert outcome.view is view and not outcome.records and not state.collapse.staged


def test_below_eighty_percent_nothing_is_staged():
    view = history()
    state = state_at(view, 0.75)
    outcome = CollapseStage().apply(view, state)
    assert outcome.view == view and not outcome.records and not state.collapse.staged


def test_from_eighty_percent_old_spans_are_staged_but_the_view_is_unchanged():
    view = history()
    state = state_at(view, 0.85)
    outcome = CollapseStage().apply(view, state)
    assert outcome.view == view and not state.collapse.commits
    # Staging is a record (a resume must stage what this run staged).
    [record] = outcome.records
    assert isinstance(record, CollapseStageRecord) and not state.collapse.staged
    apply(state, record)
    assert state.collapse.staged
    # Enough is staged to bring the count under 70% if it were all committed.
    first = state.collapse.staged[0]
    assert first.start_uuid == view[1].uuid


def test_from_ninety_percent_staged_spans_are_committed_until_under_ninety():
    view = history()
    state = state_at(view, 0.95)
    effective = state.config.effective_window
    pipeline = Pipeline([BoundarySlice(), CollapseStage()], state)
    projection = pipeline.project(view)
    records = [r for r in projection.records if isinstance(r, CollapseCommitRecord)]
    assert records and all(isinstance(r, CollapseCommitRecord | CollapseStageRecord) for r in projection.records)
    assert projection.estimated_tokens < 0.9 * effective
    assert records[-1].tokens_after == projection.estimated_tokens
    assert records[0].tokens_before >= 0.9 * effective
    # Only as many as needed: without the last one the count would still be over 90%.
    assert records[-1].tokens_before >= 0.9 * effective
    assert [c.collapse_id for c in state.collapse.commits] == [r.collapse_id for r in records]
    assert (
        projection.reports[-1].stage == "collapse"
        and projection.reports[-1].tokens_after < projection.reports[-1].tokens_before
    )


def test_projection_replaces_exactly_the_committed_span_and_keeps_the_history():
    view = history(4)
    before = list(view)
    state = state_at(view, 0.1)
    span = make_span(view[1:11], "two turns, summarized")
    assert span is not None
    state.collapse.add_commit(span)
    projection = Pipeline([BoundarySlice(), CollapseStage()], state).project(view)
    placeholder = projection.view[1]
    assert projection.view[0] is view[0] and projection.view[2:] == view[11:]
    assert isinstance(placeholder, UserMessage) and not placeholder.is_meta
    assert placeholder.uuid == placeholder_uuid(span.collapse_id)
    assert placeholder.content == "<collapsed>\ntwo turns, summarized\n</collapsed>"
    assert view == before
    # It merges with the opening context into the first user message on the wire.
    assert projection.wire[0]["role"] == "user"
    assert [b["text"] for b in projection.wire[0]["content"]][1].startswith("<collapsed>\ntwo turns")


def test_spans_never_split_tool_pairs_nor_one_streamed_reply():
    view: list[Message] = [UserMessage(content="<env/>", is_meta=True), UserMessage(content="go")]
    # A reply streamed as thinking + text + two parallel calls, with a result stored between its blocks.
    view += [
        AssistantMessage(message_id="p", content=[ThinkingBlock(thinking="hmm", signature="s")]),
        AssistantMessage(
            message_id="p", content=[ToolUseBlock(id="a", name="Bash", input={"command": "ls"})]
        ),
        UserMessage(content=[ToolResultBlock(tool_use_id="a", content=BIG)]),
        AssistantMessage(
            message_id="p", content=[ToolUseBlock(id="b", name="Read", input={"file_path": "/x"})]
        ),
        UserMessage(content=[ToolResultBlock(tool_use_id="b", content=BIG)]),
    ]
    for i in range(6):
        view += turn(i)[1:]
    view += turn(99)
    state = state_at(view, 1.0)
    state.config.effective_window = 5_000  # small spans: about MIN_SPAN_TOKENS each
    spans = [span for span, _ in candidate_spans(view, state, set())]
    assert len(spans) > 2
    uses = {b.id: m.uuid for m in view if isinstance(m, AssistantMessage) for b in m.tool_uses()}
    results = {b.tool_use_id: m.uuid for m in view if isinstance(m, UserMessage) for b in m.tool_results()}
    replies: dict[str, set[str]] = {}
    for m in view:
        if isinstance(m, AssistantMessage):
            replies.setdefault(m.message_id, set()).add(m.uuid)
    for span in spans:
        for tool_use_id, use_uuid in uses.items():
            assert (use_uuid in span.uuids) == (results[tool_use_id] in span.uuids)
        for uuids in replies.values():
            assert uuids <= span.uuids or not uuids & span.uuids


def test_the_current_turn_and_the_opening_context_are_never_collapsed():
    view = history(6)
    view += [
        UserMessage(content="and now the last one"),
        AssistantMessage(
            message_id="cur", content=[ToolUseBlock(id="cur-t", name="Bash", input={"command": "ls"})]
        ),
        UserMessage(content=[ToolResultBlock(tool_use_id="cur-t", content=BIG)]),
    ]
    turn_start = ConversationIndex(view).latest_prompt_index()
    state = state_at(view, 2.0)
    records = drain_staged(view, state)
    assert records
    covered = set(state.collapse.owner)
    assert view[0].uuid not in covered
    assert not covered & {m.uuid for m in view[turn_start:]}
    assert covered <= {m.uuid for m in view[1:turn_start]}
    # Every big result goes; a last small reply may stay when its summary would cost more than it.
    assert all(
        m.uuid in covered for m in view[1:turn_start] if isinstance(m, UserMessage) and m.is_tool_result()
    )
    projected = Pipeline([BoundarySlice(), CollapseStage()], state).project(view, dry_run=True).view
    assert projected[0] is view[0] and projected[-3:] == view[-3:]


def test_every_typed_message_is_quoted_verbatim_in_the_collapsed_text():
    view = history(8) + turn(100)
    state = state_at(view, 2.0)
    drain_staged(view, state)
    projected = Pipeline([BoundarySlice(), CollapseStage()], state).project(view, dry_run=True)
    collapsed = "\n".join(
        m.text() for m in projected.view if isinstance(m, UserMessage) and m.text().startswith("<collapsed>")
    )
    for text in typed(view)[:-1]:
        assert f"User: {text}" in collapsed
    sent = "\n".join(b["text"] for m in projected.wire for b in m["content"] if b.get("type") == "text")
    assert all(text in sent for text in typed(view))
    assert BIG not in sent


def test_a_dry_run_decides_the_same_and_changes_nothing():
    view = history()
    state = state_at(view, 0.95)
    pipeline = Pipeline([BoundarySlice(), CollapseStage()], state)
    before = snapshot(state)
    dry = pipeline.project(view, dry_run=True)
    assert snapshot(state) == before
    real = pipeline.project(view)
    assert real.records and json.dumps(dry.wire) == json.dumps(real.wire)
    assert [r.to_json() | {"timestamp": ""} for r in dry.records] == [r.to_json() | {"timestamp": ""} for r in real.records]


def test_the_bytes_are_the_same_every_turn_and_after_a_resume():
    view = history()
    state = state_at(view, 0.95)
    pipeline = Pipeline([BoundarySlice(), CollapseStage()], state)
    first = pipeline.project(view)
    assert first.records
    assert wire(pipeline, view) == json.dumps(first.wire) == wire(pipeline, view)
    resumed = PipelineState(config=replace(state.config))
    rebuild_state(resumed, view, first.records)
    assert [c.uuids for c in resumed.collapse.commits] == [c.uuids for c in state.collapse.commits]
    assert wire(Pipeline([BoundarySlice(), CollapseStage()], resumed), view) == json.dumps(first.wire)


def test_drain_commits_every_staged_span_then_stages_everything_then_gives_up():
    view = history(12) + turn(100)
    state = state_at(view, 0.85)
    Pipeline([BoundarySlice(), CollapseStage()], state).project(view)
    staged = [s.collapse_id for s in state.collapse.staged]
    assert staged and not state.collapse.commits
    records = drain_staged(view, state)
    assert [r.collapse_id for r in records] == staged
    assert not state.collapse.staged and [c.collapse_id for c in state.collapse.commits] == staged
    assert records[-1].tokens_after < records[0].tokens_before
    # Nothing staged: everything older than the current turn is staged and committed at once.
    more = drain_staged(view, state)
    assert more
    assert all(
        m.uuid in state.collapse.owner
        for m in view[1 : ConversationIndex(view).latest_prompt_index()]
        if isinstance(m, UserMessage)
    )
    assert drain_staged(view, state) == []
    state.config.strategy = "autocompact"
    assert drain_staged(history(12) + turn(100), state) == []


def test_the_count_after_a_commit_subtracts_what_the_last_usage_still_counts():
    view = history()
    state = state_at(view, 0.95)
    anchor = view[-1]
    state.tokens.last_usage = Usage(input_tokens=estimate_request(view, state))
    state.tokens.last_usage_anchor = anchor.uuid
    before = token_count_with_estimation(view, state)
    projection = Pipeline([BoundarySlice(), CollapseStage()], state).project(view)
    after = token_count_with_estimation(projection.view, state)
    commits = [r for r in projection.records if isinstance(r, CollapseCommitRecord)]
    assert commits and after == commits[-1].tokens_after < before
    assert state.collapse.freed_since_usage == before - after
    # A new usage counts the collapsed view itself: nothing is subtracted any more.
    state.tokens.last_usage_anchor = "a newer reply"
    state.tokens.last_usage = Usage(input_tokens=after)
    assert (
        token_count_with_estimation(
            projection.view + [AssistantMessage(uuid="a newer reply", message_id="n", content=[])], state
        )
        == after
    )


def test_auto_snip_leaves_collapsed_entries_alone():
    view = history()
    state = state_at(view, 0.1)
    state.config.clearable_tools = frozenset({"Bash"})
    span = make_span(view[1:21], "four turns")
    assert span is not None
    state.collapse.add_commit(span)
    spans = snip_safe_spans(view, state, keep_recent=0)
    assert spans
    assert not any(view[i].uuid in span.uuids for s in spans for i in s)


def test_a_cache_edit_no_longer_names_a_collapsed_result():
    view = history(6)
    state = state_at(view, 0.1, cache_editing=True, clearable_tools=frozenset({"Bash"}))
    anchor = view[-2]  # the last tool result
    state.microcompact.pinned.append(PinnedCacheEdit(anchor.uuid, ["t0", "t4"]))
    span = make_span(view[1:6], "turn 0")
    assert span is not None
    state.collapse.add_commit(span)
    body = json.dumps(Pipeline([BoundarySlice(), Microcompact(), CollapseStage()], state).project(view).wire)
    assert '"cache_reference": "t4"' in body and '"t0"' not in body


def test_snipped_entries_are_never_collapsed_and_a_snipped_collapse_stays_out():
    view = history(8) + turn(100)
    state = state_at(view, 2.0)
    snipped = {m.uuid for m in turn_entries(view, 2)}
    state.snip.snipped |= snipped
    pipeline = Pipeline([BoundarySlice(), CollapseStage()], state)
    assert drain_staged(pipeline.project(view, dry_run=True).view, state)
    assert not snipped & set(state.collapse.owner)
    first = state.collapse.commits[0]
    state.snip.snipped.add(placeholder_uuid(first.collapse_id))
    projected = pipeline.project(view, dry_run=True).view
    assert placeholder_uuid(first.collapse_id) not in {m.uuid for m in projected}
    assert not first.uuids & {m.uuid for m in projected}


def turn_entries(view: list[Message], i: int) -> list[Message]:
    return view[1 + 5 * i : 6 + 5 * i]
