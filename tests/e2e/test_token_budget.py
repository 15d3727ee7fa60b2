"""The output token budget (`token_budget_continuation`) through the real loop over HTTP."""

from __future__ import annotations

import re
from typing import Any

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.loop.token_budget import parse_budget
from agent_repl.core.model.events import LoopContinued, TokenBudgetProgress, TurnEnded
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

from .compaction_support import run, settings_for
from .conftest import read_records

NUDGE = re.compile(r"Output token budget: ([\d,]+) of 20,000 tokens used \((\d+)%\)")


def reply(words: int, tag: str) -> dict[str, Any]:
    return {"text": " ".join(f"{tag} part {i} written." for i in range(words))}


def expected_continuations(outputs: list[int], budget: int) -> list[int]:
    """The rule, applied to the output tokens of each reply: the turn's output when each
    continuation was decided."""
    used, decided, deltas = 0, [], []
    for index, tokens in enumerate(outputs):
        used += tokens
        if decided:
            deltas.append(tokens)
        if len(decided) >= 3 and len(deltas) >= 2 and all(d < 500 for d in deltas[-2:]):
            break
        if used >= 0.9 * budget:
            break
        decided.append(used)
        assert index < len(outputs) - 1, "the script ran out of replies"
    return decided


async def budgeted_turn(tmp_path, steps: list[dict[str, Any]]) -> tuple[list[Any], list[int], list[dict[str, Any]], Any]:
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps})).start()
    settings = settings_for(server, tmp_path)
    session = await open_session(settings, tmp_path)
    try:
        events = await run(session, "write the design doc, section by section +20k")
    finally:
        await close_session(session)
        server.stop()
    replies = [e for e in server.recordings.messages if e.status == 200]
    outputs = [e.usage["output_tokens"] for e in replies]
    return events, outputs, [e.body for e in replies], session


def nudges_on_the_wire(bodies: list[dict[str, Any]]) -> list[tuple[int, int]]:
    found = []
    for body in bodies[1:]:
        text = body["messages"][-1]["content"][-1]["text"]
        match = NUDGE.search(text)
        assert match, text
        found.append((int(match.group(1).replace(",", "")), int(match.group(2))))
    return found


async def test_a_budgeted_turn_continues_while_under_ninety_percent_and_says_how_much_is_used(tmp_path):
    events, outputs, bodies, session = await budgeted_turn(tmp_path, [reply(314, f"s{n}") for n in range(9)])
    # ~3K tokens per reply on the default model's tokenizer
    assert all(2_700 <= tokens <= 3_300 for tokens in outputs), outputs
    decided = expected_continuations(outputs, 20_000)
    assert len(decided) == 5  # 3K, 6K ... 15K go on; at ~18K (90%) the turn ends
    continued = [e for e in events if isinstance(e, LoopContinued)]
    assert [e.transition for e in continued] == ["token_budget_continuation"] * 5
    assert len(bodies) == 6
    assert nudges_on_the_wire(bodies) == [(used, used * 100 // 20_000) for used in decided]
    assert [pct for _, pct in nudges_on_the_wire(bodies)] == [used * 100 // 20_000 for used in decided]
    ended = events[-1]
    assert isinstance(ended, TurnEnded) and ended.reason == "completed" and ended.usage.output_tokens == sum(outputs)
    progress = [e for e in events if isinstance(e, TokenBudgetProgress)]
    assert [p.used for p in progress] == [sum(outputs[: i + 1]) for i in range(len(outputs))]
    assert {p.budget for p in progress} == {20_000}
    recorded = [r["attachment"] for r in read_records(session.sink.path) if r["type"] == "attachment"]
    assert [a["type"] for a in recorded] == ["token_budget_continuation"] * 5
    assert [a["outputTokens"] for a in recorded] == decided
    assert [a["continuation"] for a in recorded] == [1, 2, 3, 4, 5]


async def test_a_budgeted_turn_stops_on_diminishing_returns(tmp_path):
    steps = [reply(400, "big"), reply(400, "big2"), reply(20, "a"), reply(20, "b"), reply(20, "c"), reply(20, "d")]
    events, outputs, bodies, _ = await budgeted_turn(tmp_path, steps)
    decided = expected_continuations(outputs, 20_000)
    # Two full replies, then small ones: the third continuation is the second in a row to add
    # under 500 tokens, so the turn ends there, far under its budget.
    assert len(decided) == 3 and len(bodies) == 4
    assert all(tokens < 500 for tokens in outputs[2:]) and sum(outputs) < 10_000
    assert [e.transition for e in events if isinstance(e, LoopContinued)] == ["token_budget_continuation"] * 3
    assert [used for used, _ in nudges_on_the_wire(bodies)] == decided
    assert events[-1].reason == "completed"


def test_budgets_are_read_from_the_prompt():
    assert parse_budget("+500k") == 500_000
    assert parse_budget("refactor the parser +2M") == 2_000_000
    assert parse_budget("use 2M tokens on this") == 2_000_000
    assert parse_budget("spend 300k tokens to finish the port") == 300_000
    assert parse_budget("please use 1.5m tokens") == 1_500_000
    assert parse_budget("a+500k b") is None and parse_budget("use 2 hammers") is None
    assert parse_budget("the 500k limit") is None and parse_budget("no budget") is None
