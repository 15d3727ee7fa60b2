from agent_repl.context.normalize import INTERRUPTED_TOOL_RESULT, normalize_drafts
from agent_repl.core.api.request import build_request
from agent_repl.core.model.messages import (
    AssistantMessage,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)


def _wire(view, *, tag_ids=True):
    """The wire messages the request sends, as role and content."""
    return [{"role": d.role, "content": d.content} for d in normalize_drafts(view, tag_ids=tag_ids)]


def tool_use(i: str, name: str = "Read") -> ToolUseBlock:
    return ToolUseBlock(id=i, name=name, input={"file_path": f"/x/{i}"})


def result(i: str, text: str = "ok") -> UserMessage:
    return UserMessage(content=[ToolResultBlock(tool_use_id=i, content=text)])


def test_split_reply_and_parallel_results_merge_into_one_wire_message_each():
    view = [
        UserMessage(content="look at two files"),
        AssistantMessage(message_id="m1", content=[ThinkingBlock(thinking="hmm", signature="s")]),
        AssistantMessage(message_id="m1", content=[tool_use("a")]),
        AssistantMessage(message_id="m1", content=[tool_use("b")]),
        SystemMessage(subtype="informational", content="not for the model"),
        result("a"),
        result("b"),
    ]
    wire = _wire(view, tag_ids=False)
    assert [m["role"] for m in wire] == ["user", "assistant", "user"]
    assert [b["type"] for b in wire[1]["content"]] == ["thinking", "tool_use", "tool_use"]
    assert [b["tool_use_id"] for b in wire[2]["content"]] == ["a", "b"]
    assert all("is_error" not in b for b in wire[2]["content"])


def test_missing_result_gets_a_synthetic_error_and_orphans_and_duplicates_go():
    view = [
        UserMessage(content="go"),
        AssistantMessage(message_id="m1", content=[tool_use("a")]),
        AssistantMessage(message_id="m1", content=[tool_use("b")]),
        result("b"),
        result("b", "duplicate"),
        result("zzz", "orphan"),
        UserMessage(content="and now?"),
    ]
    wire = _wire(view, tag_ids=False)
    last = wire[-1]["content"]
    assert [b.get("tool_use_id") for b in last if b["type"] == "tool_result"] == ["a", "b"]
    assert last[0] == {"type": "tool_result", "tool_use_id": "a", "content": INTERRUPTED_TOOL_RESULT, "is_error": True}
    assert last[1]["content"] == "ok"
    assert last[-1] == {"type": "text", "text": "and now?"}


def test_trailing_tool_use_after_a_crash_is_answered():
    view = [UserMessage(content="go"), AssistantMessage(message_id="m1", content=[tool_use("a")])]
    wire = _wire(view, tag_ids=False)
    assert wire[-1]["role"] == "user" and wire[-1]["content"][0]["tool_use_id"] == "a"


def test_thinking_only_message_and_empty_text_are_dropped():
    view = [
        UserMessage(content="hi"),
        AssistantMessage(message_id="m0", content=[ThinkingBlock(thinking="x", signature="s")]),
        AssistantMessage(message_id="m1", content=[TextBlock(text="")]),
        AssistantMessage(message_id="m1", content=[TextBlock(text="hello")]),
    ]
    wire = _wire(view, tag_ids=False)
    assert wire == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
    ]


def test_breakpoints_on_tools_system_and_last_two_user_messages_without_mutating_input():
    wire = _wire(
        [
            UserMessage(content="one"),
            AssistantMessage(message_id="m1", content=[tool_use("a")]),
            result("a"),
            AssistantMessage(message_id="m2", content=[TextBlock(text="done")]),
            UserMessage(content="two"),
        ],
        tag_ids=False,
    )
    snapshot = repr(wire)
    tools = [{"name": "A", "input_schema": {}}, {"name": "B", "input_schema": {}}]
    body = build_request(model="m", max_tokens=10, system="sys", tools=tools, messages=wire)
    assert repr(wire) == snapshot
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in body["tools"][0] and body["tools"][1]["cache_control"] == {"type": "ephemeral"}
    marked = [
        (i, j) for i, m in enumerate(body["messages"]) for j, b in enumerate(m["content"]) if "cache_control" in b
    ]
    assert marked == [(2, 0), (4, 0)]


def test_id_tags_go_on_non_meta_user_messages_only_and_are_stable():
    from agent_repl.context.ids import short_id

    prompt = UserMessage(uuid="u-1", content="hello")
    meta = UserMessage(uuid="u-0", content="<system-reminder>ctx</system-reminder>", is_meta=True)
    view = [
        meta,
        prompt,
        AssistantMessage(message_id="m1", content=[tool_use("a")]),
        UserMessage(uuid="u-2", content=[ToolResultBlock(tool_use_id="a", content="out")]),
    ]
    wire = _wire(view)
    assert wire[0]["content"] == [
        {"type": "text", "text": "<system-reminder>ctx</system-reminder>"},
        {"type": "text", "text": f"hello [id:{short_id('u-1')}]"},
    ]
    assert wire[2]["content"][0]["content"] == f"out\n[id:{short_id('u-2')}]"
    assert prompt.content == "hello"  # the history is untouched
    assert short_id("u-1") == short_id("u-1") and len(short_id("u-1")) == 6
    assert all(c in "0123456789abcdefghijklmnopqrstuvwxyz" for c in short_id("anything"))


def test_split_reply_with_results_stored_between_its_blocks_is_one_wire_message():
    view = [
        UserMessage(content="go"),
        AssistantMessage(message_id="m1", content=[tool_use("a")]),
        result("a"),
        AssistantMessage(message_id="m1", content=[tool_use("b")]),
        result("b"),
    ]
    wire = _wire(view, tag_ids=False)
    assert [m["role"] for m in wire] == ["user", "assistant", "user"]
    assert [b["id"] for b in wire[1]["content"]] == ["a", "b"]
    assert [b["tool_use_id"] for b in wire[2]["content"]] == ["a", "b"]


def test_tool_references_stay_references_only_while_their_tool_is_deferred_in_this_request():
    from agent_repl.context.boundary import BoundarySlice
    from agent_repl.context.ids import id_tag
    from agent_repl.context.projector import Pipeline
    from agent_repl.context.state import PipelineConfig, PipelineState
    from agent_repl.core.model.messages import ToolReferenceBlock

    found = "mcp__ledger__record_07"
    search = UserMessage(content=[ToolResultBlock(tool_use_id="s", content=[ToolReferenceBlock(tool_name=found)])])
    view = [
        UserMessage(content="find the ledger tool"),
        AssistantMessage(message_id="m1", content=[ToolUseBlock(id="s", name="ToolSearch", input={"query": "ledger"})]),
        search,
    ]

    def wire_for(history, deferred):
        pipeline = Pipeline([BoundarySlice()], PipelineState(config=PipelineConfig(deferred_tools=frozenset(deferred))))
        projection = pipeline.project(history, dry_run=True)
        return projection, projection.wire[-1]["content"]

    projection, content = wire_for(view, {found})
    # The [id:] tag follows the result as its own block, so the result holds nothing but references.
    assert content == [
        {"type": "tool_result", "tool_use_id": "s", "content": [{"type": "tool_reference", "tool_name": found}]},
        {"type": "text", "text": id_tag(search.uuid)},
    ]
    assert projection.loaded_tools == frozenset()
    _, gone = wire_for(view, set())
    assert gone[0]["content"] == [{"type": "text", "text": f"[Tool {found} is not a deferred tool of this request.]"}]
    # After a compaction whose boundary loaded the tool, a reference in the kept tail is text too.
    boundary = SystemMessage(subtype="compact_boundary", metadata={"preCompactDiscoveredTools": [found]})
    projection, loaded = wire_for([boundary, *view], {found, "mcp__ledger__record_08"})
    assert projection.loaded_tools == frozenset({found})
    assert loaded[0]["content"][0]["type"] == "text"
