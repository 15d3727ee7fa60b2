"""Server-side clears in batches (agent_repl.context.server_clear): what a batch takes, that the
emulator clears exactly that set on every later request, and that the cached prefix breaks only
when a new batch starts, from the frontier on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agent_repl.context.boundary import BoundarySlice
from agent_repl.context.microcompact import Microcompact, clearable_results
from agent_repl.context.projector import Pipeline
from agent_repl.context.resume import rebuild_state
from agent_repl.context.server_clear import plan_batch
from agent_repl.context.state import PipelineConfig, PipelineState
from agent_repl.core.api.request import build_request
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    iso_timestamp,
)
from agent_repl.emulator.context_edits import CLEARED_RESULT_TEXT, CONTEXT_MANAGEMENT_BETA
from agent_repl.emulator.engine import Engine, Prepared
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import CallablePolicy, Reply
from agent_repl.transcript.records import ServerClearRecord

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
SYSTEM = "You are a careful assistant. " * 150


def step(i: int, name: str = "Read", words: int = 400) -> list[Message]:
    return [
        AssistantMessage(
            message_id=f"m{i}",
            content=[ToolUseBlock(id=f"t{i}", name=name, input={"file_path": f"/src/f{i}.py"})],
            timestamp=iso_timestamp(T0 + timedelta(seconds=10 * i)),
        ),
        UserMessage(content=[ToolResultBlock(tool_use_id=f"t{i}", content=f"line {i} of the file " * words)]),
    ]


def history_of(steps: int, *, edit_at: int | None = None) -> list[Message]:
    history: list[Message] = [UserMessage(content="Read the whole project.", timestamp=iso_timestamp(T0))]
    for i in range(steps):
        history += step(i, "Edit" if i == edit_at else "Read")
    return history


def pipeline(*, responses: int = 50, protect: int = 8_000, now: datetime | None = None) -> Pipeline:
    config = PipelineConfig(server_clear=True, server_clear_protect_tokens=protect, clearable_tools=frozenset({"Read"}))
    config.set_window(200_000)
    state = PipelineState(config=config, clock=lambda: now or T0 + timedelta(minutes=1))
    state.tokens.responses = responses
    return Pipeline([BoundarySlice(), Microcompact()], state)


def test_a_batch_takes_what_is_older_than_the_protected_newest_results():
    history = history_of(12)
    state = pipeline().state
    batch = plan_batch(history, state, clearable_results(history, state), cold=False)
    assert batch is not None and batch.trigger == "pays"
    # About 2,400 tokens a result: the newest 8K (four results) stay, the eight before go.
    assert list(batch.sizes) == [f"t{i}" for i in range(8)]
    # Early in a session the same batch does not pay for the prefix it breaks; a cold cache is free.
    early = pipeline(responses=1).state
    clearable = clearable_results(history, early)
    assert plan_batch(history, early, clearable, cold=False) is None
    assert plan_batch(history, early, clearable, cold=True).trigger == "cold"  # type: ignore[union-attr]


def send(engine: Engine, body: dict) -> Prepared:
    prepared = engine.prepare(body, api_key="k", betas={CONTEXT_MANAGEMENT_BETA}, request_index=0)
    completion = engine.respond(prepared)
    engine.commit(prepared)
    engine.completed(prepared, completion)
    return prepared


def request(p: Pipeline, history: list[Message]) -> tuple[dict, list]:
    projection = p.project(history)
    body = build_request(
        model="claude-sonnet-5-5",
        max_tokens=100,
        system=SYSTEM,
        tools=[],
        messages=projection.wire,
        extra=projection.body_extras,
        cache=projection.cache,
    )
    return body, projection.records


def visible_results(prepared: Prepared) -> dict[str, object]:
    return {
        b["tool_use_id"]: b["content"]
        for m in prepared.visible_body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    }


def test_the_server_clears_exactly_the_batch_and_the_prefix_breaks_only_at_a_new_batch():
    engine = Engine(default_model_table(), CallablePolicy(lambda r: Reply([{"type": "text", "text": "ok"}])), clock=lambda: 1.0)
    p = pipeline()
    p.state.config.server_clear_min_tokens = 6_000  # so that two results do not make a batch
    history = history_of(12, edit_at=2)  # an Edit among the reads: excluded, never cleared
    body, records = request(p, history)
    [record] = records
    assert isinstance(record, ServerClearRecord) and record.tool_use_ids == [f"t{i}" for i in range(8) if i != 2]
    [edit] = [e for e in body["context_management"]["edits"] if e["type"] == "clear_tool_uses_20250919"]
    assert edit["exclude_tools"] == ["Edit"] and edit["keep"]["value"] == 4
    first = send(engine, body)
    assert first.applied_edits[0]["cleared_tool_uses"] == 7
    seen = visible_results(first)
    assert [tid for tid, text in seen.items() if text == CLEARED_RESULT_TEXT] == record.tool_use_ids
    # Two more steps, no new batch: the set stays, and the whole previous prompt is read.
    history += step(12) + step(13)
    body, records = request(p, history)
    assert not records
    second = send(engine, body)
    assert second.applied_edits[0]["cleared_tool_uses"] == 7
    assert second.usage["cache_read_input_tokens"] == first.total_input_tokens
    # More steps: a new batch breaks the prefix, but only after the frontier the requests marked.
    history += step(14) + step(15) + step(16) + step(17)
    body, records = request(p, history)
    assert records and records[0].tool_use_ids[0] == "t8"
    third = send(engine, body)
    read = third.usage["cache_read_input_tokens"]
    assert third.applied_edits[0]["cleared_tool_uses"] == 7 + len(records[0].tool_use_ids)
    assert first.usage["cache_read_input_tokens"] < read < second.total_input_tokens


def test_a_resume_sends_the_same_clears():
    p = pipeline()
    history = history_of(12)
    body, records = request(p, history)
    resumed = pipeline()
    rebuild_state(resumed.state, history, records)
    resumed.state.tokens.responses = p.state.tokens.responses
    again, new_records = request(resumed, history)
    assert not new_records and again["context_management"] == body["context_management"]


def test_a_cold_cache_clears_at_once_without_a_client_side_edit():
    history = history_of(6) + [
        AssistantMessage(message_id="end", content=[TextBlock(text="done")], timestamp=iso_timestamp(T0 + timedelta(minutes=2))),
        UserMessage(content="And now?"),
    ]
    p = pipeline(responses=1, now=T0 + timedelta(minutes=9))
    p.state.config.clear_at_expiry = True
    projection = p.project(history)
    [record] = projection.records
    assert isinstance(record, ServerClearRecord) and record.trigger == "cold"
    # The wire still carries every result as it was: the server clears them.
    assert all("line" in str(b["content"]) for m in projection.wire for b in m["content"] if b.get("type") == "tool_result")
