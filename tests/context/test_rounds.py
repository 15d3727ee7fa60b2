"""The conversation index (context/rounds.py) over generated histories: parallel tool calls whose
results interleave with the reply's later blocks, a reply stored as several entries, results out
of order, an orphan result, an interrupted turn. Each answer is checked against a brute force."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_repl.context.normalize import merge_into_wire
from agent_repl.context.rounds import ConversationIndex, index_of
from agent_repl.context.state import PipelineState
from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

# More generated histories with AGENT_REPL_LONG_TESTS=1 (the suite's `--long` size).
EXAMPLES = 1_000 if os.environ.get("AGENT_REPL_LONG_TESTS") == "1" else 150


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    """Turns of a prompt and replies; each reply one entry per block, as the loop stores it."""
    view: list[Message] = []
    calls = 0
    for turn in range(draw(st.integers(1, 4))):
        view.append(UserMessage(content=f"prompt {turn}", is_meta=turn == 0 and draw(st.booleans())))
        for reply in range(draw(st.integers(0, 3))):
            message_id = f"msg-{turn}-{reply}"
            blocks: list[Message] = []
            if draw(st.booleans()):
                blocks.append(AssistantMessage(message_id=message_id, content=[ThinkingBlock(thinking="hm", signature="s")]))
            if draw(st.booleans()):
                blocks.append(AssistantMessage(message_id=message_id, content=[TextBlock(text="let me look")]))
            ids = [f"t{calls + k}" for k in range(draw(st.integers(0, 3)))]
            calls += len(ids)
            uses = [AssistantMessage(message_id=message_id, content=[ToolUseBlock(id=i, name="Read", input={})]) for i in ids]
            results = [UserMessage(content=[ToolResultBlock(tool_use_id=i, content="out")]) for i in ids]
            results = draw(st.permutations(results))  # results out of order
            if results and draw(st.integers(0, 4)) == 0:
                results = results[:-1]  # an interrupted call: no result recorded
            if draw(st.integers(0, 5)) == 0:
                results.append(UserMessage(content=[ToolResultBlock(tool_use_id="orphan", content="?")]))
            if results and draw(st.integers(0, 6)) == 0:
                blocks.append(results.pop())  # a result stored before its call
            if draw(st.booleans()):
                # Interleaved: a result stored right after each call, before the reply's next block.
                for use in uses:
                    blocks.append(use)
                    answer = next((r for r in results if r.tool_results()[0].tool_use_id == use.tool_uses()[0].id), None)
                    if answer is not None:
                        blocks.append(answer)
                        results.remove(answer)
                blocks.extend(results)
            else:
                blocks.extend(uses + results)
            if draw(st.integers(0, 6)) == 0:
                blocks.insert(draw(st.integers(0, len(blocks))), SystemMessage(subtype="informational", content="note"))
            view.extend(blocks)
        if draw(st.integers(0, 5)) == 0:
            view.append(UserMessage(content="[Request interrupted by user]"))
    return view


def spans(view: list[Message]) -> list[set[int]]:
    """For each reply and each tool call, the entries that mention it (an orphan result alone)."""
    groups: dict[str, set[int]] = {}
    for index, message in enumerate(view):
        if isinstance(message, AssistantMessage):
            groups.setdefault("reply:" + message.message_id, set()).add(index)
            for use in message.tool_uses():
                groups.setdefault("tool:" + use.id, set()).add(index)
        elif isinstance(message, UserMessage):
            for result in message.tool_results():
                groups.setdefault("tool:" + result.tool_use_id, set()).add(index)
    called = {use.id for m in view if isinstance(m, AssistantMessage) for use in m.tool_uses()}
    return [g for key, g in groups.items() if not key.startswith("tool:") or key[5:] in called]


def cut_positions(view: list[Message]) -> list[int]:
    """Brute force: the positions no reply and no tool call has entries on both sides of."""
    ranges = [(min(g), max(g)) for g in spans(view)]
    return [p for p in range(len(view) + 1) if not any(lo < p <= hi for lo, hi in ranges)]


@settings(max_examples=EXAMPLES, deadline=None)
@given(histories())
def test_cuts_are_exactly_the_places_no_reply_and_no_tool_call_crosses(view):
    index = ConversationIndex(view)
    expected = cut_positions(view)
    assert index.cuts == expected  # so each run between two cuts is the smallest one no round crosses
    assert index_of(view, PipelineState()).cuts == expected  # facts give the same ids as the blocks
    for start in range(len(view) + 1):
        assert index.cut_at_or_before(start) == max(c for c in expected if c <= start)
    end = index.latest_prompt_index()
    segments = index.segments(end)
    assert all(b <= end for _, b in segments)
    assert [a for a, _ in segments] == index.cuts[: len(segments)]
    assert index.round_starts() == [c for c in index.cuts[:-1] if isinstance(view[c], AssistantMessage)]


@settings(max_examples=EXAMPLES, deadline=None)
@given(histories(), st.data())
def test_pair_closure_holds_both_halves_of_every_call_and_nothing_else(view, data):
    index = ConversationIndex(view)
    chosen = data.draw(st.sets(st.integers(0, len(view) - 1), max_size=3))
    closure = index.pair_closure(chosen)
    called = {use.id for m in view if isinstance(m, AssistantMessage) for use in m.tool_uses()}
    tool_groups = [{i for i, m in enumerate(view) if tool_use_id in ids_of(m)} for tool_use_id in called]
    expected = set(chosen)
    while True:  # brute force: grow by whole tool groups until nothing changes
        grown = expected.union(*(g for g in tool_groups if g & expected))
        if grown == expected:
            break
        expected = grown
    assert closure == expected
    assert index.answered_in(closure) == {t for i in closure if isinstance(view[i], UserMessage) for t in ids_of(view[i])}
    assert index.tool_calls_in(closure) == sum(
        len(view[i].tool_uses()) for i in closure if isinstance(view[i], AssistantMessage)
    )


def ids_of(message: Message) -> set[str]:
    if isinstance(message, AssistantMessage):
        return {use.id for use in message.tool_uses()}
    if isinstance(message, UserMessage):
        return {result.tool_use_id for result in message.tool_results()}
    return set()


@settings(max_examples=EXAMPLES, deadline=None)
@given(histories())
def test_wire_groups_are_the_user_messages_normalization_merges(view):
    merged = [d.sources for d in merge_into_wire(view) if d.role == "user"]
    groups = [[view[i].uuid for i in group] for group in ConversationIndex(view).wire_groups()]
    assert groups == merged


@settings(max_examples=EXAMPLES, deadline=None)
@given(histories())
def test_the_latest_prompt_is_the_last_user_entry_that_is_neither_meta_nor_results(view):
    index = ConversationIndex(view).latest_prompt_index()
    prompts = [
        i for i, m in enumerate(view) if isinstance(m, UserMessage) and not m.is_meta and not m.is_tool_result()
    ]
    assert index == (prompts[-1] if prompts else len(view))


def test_a_reply_split_around_its_results_is_one_round():
    view: list[Message] = [
        UserMessage(content="go"),
        AssistantMessage(message_id="m1", content=[ToolUseBlock(id="a", name="Read", input={})]),
        UserMessage(content=[ToolResultBlock(tool_use_id="a", content="x")]),
        AssistantMessage(message_id="m1", content=[ToolUseBlock(id="b", name="Read", input={})]),
        UserMessage(content=[ToolResultBlock(tool_use_id="b", content="y")]),
        AssistantMessage(message_id="m2", content=[TextBlock(text="done")]),
    ]
    index = ConversationIndex(view)
    assert index.cuts == [0, 1, 5, 6]
    assert index.round_starts() == [1, 5]
    assert index.cut_at_or_before(3) == 1
    assert index.pair_closure([3]) == {3, 4}  # snip takes a call with its result, not the whole reply
    assert index.wire_groups() == [[0], [2, 4]]
