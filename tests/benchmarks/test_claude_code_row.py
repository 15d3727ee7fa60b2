"""The Claude Code row's pure parts: its sessions, how requests are told apart and answered, what a
run measures, the report's checks. The real CLI is needed by one slow test only."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from agent_repl.contract import SUMMARY_REQUEST_MARKER
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import PolicyRequest
from agent_repl.offline.summary import AgentSummarizer
from benchmarks import claude_code_row
from benchmarks.ccrow.conditions import summarizer_for
from benchmarks.ccrow.measure import CompactionWatch, Progress, extends, kept_after, message_digests
from benchmarks.ccrow.policy import SIDE_REPLY, RowPolicy, appended_instruction, classify, without_instruction
from benchmarks.ccrow.report import verdict
from benchmarks.ccrow.runners import RowResult, transcript_boundaries
from benchmarks.ccrow.sessions import Plan, build_session

TOOLS = [
    {"name": "Read", "input_schema": {"type": "object"}},
    {"name": "Bash", "input_schema": {"type": "object"}},
]
INSTRUCTION = "Write a detailed account of the work so far. " * 80  # about 3,600 characters
PROMPTS = ["How is `pkg/a.py` put together?", "And `pkg/b.py`?"]


def body(*messages: dict[str, Any], tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-5-5",
        "max_tokens": 1000,
        "tools": TOOLS if tools is None else tools,
        "messages": list(messages),
    }


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def result(tool_id: str, value: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": value}


def call(tool_id: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": tool_id, "name": "Read", "input": {"file_path": "/src/pkg/a.py"}}
        ],
    }


def conversation() -> list[dict[str, Any]]:
    return [user(text(PROMPTS[0])), call("toolu_1"), user(result("toolu_1", "1\tclass A:"))]


# Recognising requests


def test_claude_codes_summary_request_is_a_long_text_appended_after_the_tool_results() -> None:
    messages = conversation()
    messages[-1] = user(result("toolu_1", "1\tclass A:"), text(INSTRUCTION))
    assert appended_instruction(body(*messages), PROMPTS) == INSTRUCTION
    assert classify(body(*messages), "claude-code", PROMPTS) == "summary"


def test_a_summary_request_at_the_end_of_a_turn_follows_the_reply_text() -> None:
    messages = [
        user(text(PROMPTS[0])),
        {"role": "assistant", "content": [text("Done.")]},
        user(text(INSTRUCTION)),
    ]
    assert classify(body(*messages), "claude-code", PROMPTS) == "summary"


def test_main_requests_hold_tool_results_or_the_typed_prompt() -> None:
    assert classify(body(*conversation()), "claude-code", PROMPTS) == "main"
    long_prompt = PROMPTS[1] + " " + "x" * 3000
    assert (
        classify(body(user(text("context"), text(long_prompt))), "claude-code", [PROMPTS[0], long_prompt])
        == "main"
    )
    # A short reminder appended after the results is not the summary instruction.
    reminded = conversation()
    reminded[-1] = user(result("toolu_1", "1\tclass A:"), text("<reminder>a file changed</reminder>"))
    assert classify(body(*reminded), "claude-code", PROMPTS) == "main"


def test_requests_offering_no_tools_are_side_requests() -> None:
    assert classify(body(user(text("title this")), tools=[]), "claude-code", PROMPTS) == "side"


def test_agent_repls_own_markers_decide_for_it_and_nothing_else_does() -> None:
    marked = conversation() + [
        call("toolu_2"),
        user(result("toolu_2", "x"), text(f"{SUMMARY_REQUEST_MARKER} sum up")),
    ]
    assert classify(body(*marked), "agent-repl", PROMPTS) == "summary"
    assert (
        classify({**body(*conversation()), "compaction": {"type": "summarize"}}, "agent-repl", PROMPTS)
        == "summary"
    )
    appended = conversation()
    appended[-1] = user(result("toolu_1", "x"), text(INSTRUCTION))
    assert classify(body(*appended), "agent-repl", PROMPTS) == "main"


def test_the_summarizer_sees_the_conversation_without_the_instruction() -> None:
    messages = conversation()
    messages[-1] = user(result("toolu_1", "1\tclass A:"), text(INSTRUCTION))
    stripped = without_instruction(body(*messages))
    assert stripped["messages"][-1]["content"] == [result("toolu_1", "1\tclass A:")]
    ended = [
        user(text(PROMPTS[0])),
        {"role": "assistant", "content": [text("Done.")]},
        user(text(INSTRUCTION)),
    ]
    assert [m["role"] for m in without_instruction(body(*ended))["messages"]] == ["user", "assistant"]


# The policy


def request(payload: dict[str, Any], index: int = 0) -> PolicyRequest:
    spec = default_model_table()["claude-sonnet-5-5"]
    return PolicyRequest(payload, spec, index, summarizer=AgentSummarizer())


def scripted_policy() -> RowPolicy:
    scenario = {
        "steps": [
            {"text": "reading", "tools": [{"name": "Read", "input": {"file_path": "/src/pkg/a.py"}}]},
            {"text": "done"},
        ]
    }
    return RowPolicy(scenario, lambda payload: classify(payload, "claude-code", PROMPTS))


def test_main_requests_take_the_next_step_and_summaries_take_none() -> None:
    policy = scripted_policy()
    first = request(body(user(text(PROMPTS[0]))))
    reply = policy.reply(first)
    policy.completed(first, reply)
    assert reply.content[-1]["type"] == "tool_use" and policy.cursor == 1
    messages = conversation()
    messages[-1] = user(result("toolu_1", "1\tclass A:"), text(INSTRUCTION))
    summary = request(body(*messages), 1)
    answer = policy.reply(summary)
    policy.completed(summary, answer)
    written = answer.content[0]["text"]
    assert "<summary>" in written and PROMPTS[0] in written and INSTRUCTION.strip() not in written
    assert policy.cursor == 1
    side = request(body(user(text("title")), tools=[]), 2)
    assert policy.reply(side).content[0]["text"] == SIDE_REPLY
    assert policy.cursor == 1


# What a run measures


def tiny_plan() -> Plan:
    return Plan("tiny", "pkg", 3, ("NEEDLE-1", "Reviewer Q", "TCK-1"), ("todo one", "todo two", "todo three"))


def tiny_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "pkg"
    tree.mkdir()
    for index, lines in enumerate((1500, 400, 300)):
        body_text = "".join(
            f"def f{index}_{n}():\n    return {n}  # padding to make the module big enough\n"
            for n in range(lines // 2)
        )
        (tree / f"m{index}.py").write_text(body_text, encoding="utf-8")
    return tree


def test_a_session_reads_big_modules_with_tools_both_agents_offer(tmp_path: Path) -> None:
    session = build_session(tiny_plan(), tiny_tree(tmp_path))
    assert len(session.turns) == 5  # three modules, then the two questions about the planted facts
    calls = [c for turn in session.turns for step in turn.steps for c in step.calls]
    assert {c.name for c in calls} == {"Read", "Bash"}
    assert all(turn.steps[-1].calls == () for turn in session.turns)
    first, second = session.prompts[:2]
    assert "NEEDLE-1" in first and "Reviewer Q" in first and "todo two" in first and "TCK-1" in second
    assert session.paths[0].endswith("m0.py")
    # The biggest module is read in two chunks.
    assert [c.input.get("offset") for c in calls if c.name == "Read"][:2] == [None, 901]
    assert len(session.scenario()["steps"]) == session.step_count


def test_a_compaction_is_a_rewrite_that_shrinks_the_context(tmp_path: Path) -> None:
    session = build_session(tiny_plan(), tiny_tree(tmp_path))
    watch = CompactionWatch(session, Progress(sent=2))
    grown = conversation()
    watch.main(body(*grown[:1]), 10_000)
    watch.main(body(*grown), 50_000)
    rewritten = [user(text("thinking dropped")), *grown[1:]]
    watch.main(body(*rewritten), 49_000)
    assert watch.compactions == [] and watch.rewrites == 1
    summary_view = [user(text(f"Summary. The user said: {session.prompts[0]} and the codename NEEDLE-1."))]
    watch.main(body(*summary_view), 12_000)
    assert len(watch.compactions) == 1
    kept = watch.compactions[0]
    assert (kept.before, kept.after) == (49_000, 12_000)
    assert kept.kept["users"] == (1, 2)
    # The first prompt holds two needles; the ticket (turn 2) is not in the view.
    assert kept.kept["needles"] == (2, 3)
    assert kept.kept["todos"] == (3, 3)


def test_needles_count_only_once_planted(tmp_path: Path) -> None:
    session = build_session(tiny_plan(), tiny_tree(tmp_path))
    assert kept_after(session, 1, "")["needles"] == (0, 2)
    assert kept_after(session, 2, "TCK-1")["needles"] == (1, 3)


def test_digests_ignore_cache_markers() -> None:
    plain = conversation()
    marked = conversation()
    marked[-1] = user({**result("toolu_1", "1\tclass A:"), "cache_control": {"type": "ephemeral"}})
    assert extends(message_digests(body(*plain[:2])), message_digests(body(*marked)))


def test_claude_codes_own_record_of_its_compactions_is_counted(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "projects" / "p"
    folder.mkdir(parents=True)
    (folder / "s.jsonl").write_text(
        '{"type":"system","subtype":"compact_boundary"}\n{"type":"user"}\nnot json\n', encoding="utf-8"
    )
    assert transcript_boundaries(tmp_path) == 1


# The report's checks


def row(agent: str, cost: float, compactions: int) -> RowResult:
    from benchmarks.ccrow.measure import Compaction

    kept = {"users": (1, 1), "paths": (1, 1), "todos": (1, 1), "needles": (1, 1)}
    return RowResult(
        "s",
        agent,
        200_000,
        "realistic",
        cost_units=cost,
        compactions=[Compaction(100, 10, kept)] * compactions,
    )


def test_the_targets_cost_compactions_and_retention() -> None:
    met = verdict(row("agent-repl", 79, 2), row("claude-code", 100, 1))
    assert met.met and met.ratio == pytest.approx(0.79)
    assert not verdict(row("agent-repl", 81, 1), row("claude-code", 100, 1)).cost
    assert not verdict(row("agent-repl", 50, 3), row("claude-code", 100, 1)).compactions


def test_the_lossy_condition_keeps_nothing_verbatim_and_the_realistic_one_quotes() -> None:
    said = body(user(text(PROMPTS[0])), call("toolu_1"), user(result("toolu_1", "x")))
    assert PROMPTS[0] not in summarizer_for("lossy").summary(said, "summary")
    assert PROMPTS[0] in summarizer_for("realistic").summary(said, "summary")
    with pytest.raises(ValueError, match="unknown summary condition"):
        summarizer_for("generous")


def test_without_the_cli_the_row_says_so_and_succeeds(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert claude_code_row.main([]) == 0
    assert "not on PATH" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("claude") is None, reason="the Claude Code CLI is not installed")
def test_the_real_cli_plays_a_tiny_session(tmp_path: Path) -> None:
    from benchmarks.ccrow.runners import run_claude_code

    tree = tiny_tree(tmp_path)
    session = build_session(tiny_plan(), tree)
    played = run_claude_code(session, tmp_path, 200_000, AgentSummarizer(), "realistic")
    assert played.completed, played.note
    assert played.requests["main"] == session.step_count


def test_the_report_is_rewritten_from_the_saved_runs(tmp_path: Path) -> None:
    import json
    from dataclasses import asdict

    from benchmarks.ccrow.report import load_results, render

    runs = [row("claude-code", 100, 1), row("agent-repl", 79, 2)]
    saved = tmp_path / "row.json"
    saved.write_text(json.dumps([asdict(r) for r in runs]), encoding="utf-8")
    loaded = load_results(saved)
    assert loaded == runs
    text = render(loaded, command="cmd", version="9.9.9", wall_minutes=1.0, sources={"realistic": "here"})
    assert "agent-repl costs 0.79x Claude Code (target at most 0.8x: met on 1)" in text
    assert "every target met on every session" in text


def test_each_tool_result_is_counted_once(tmp_path: Path) -> None:
    watch = CompactionWatch(build_session(tiny_plan(), tiny_tree(tmp_path)), Progress(sent=1))
    grown = conversation()
    watch.results(body(*grown), lambda block: len(str(block["content"])))
    watch.results(body(*grown), lambda block: 1_000)  # the same result sent again (a retry, a rewrite)
    watch.results(body(*grown[:1]), lambda block: 1_000)  # a prompt: no results
    assert watch.tool_output == {"toolu_1": len("1\tclass A:")}


def test_the_main_requests_cost_is_split_into_writes_reads_uncached_and_output() -> None:
    from benchmarks.ccrow.measure import entry_units, main_parts
    from benchmarks.replay.meter import RequestLog

    spec = default_model_table()["claude-sonnet-5-5"]
    usage = {"input_tokens": 10, "cache_creation_input_tokens": 1_000, "cache_read_input_tokens": 20_000}
    log = [
        RequestLog(0, "main", 0.0, None, 21_010, False, usage, output_tokens=100),
        RequestLog(1, "memory", 1.0, 1.0, 21_010, False, usage, output_tokens=4_000),
    ]
    parts = main_parts(log, spec)
    assert parts == {"written": 1_250.0, "read": 2_000.0, "uncached": 10.0, "output": 500.0}
    assert sum(parts.values()) == pytest.approx(entry_units(log[0], spec))


def test_paths_kept_count_only_modules_a_request_before_the_compaction_read(tmp_path: Path) -> None:
    session = build_session(tiny_plan(), tiny_tree(tmp_path))
    watch = CompactionWatch(session, Progress(sent=2))
    read_first = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": session.paths[0]}}],
    }
    grown = [user(text(session.prompts[0])), read_first, user(result("toolu_1", "1\tx = 1"))]
    watch.main(body(*grown), 50_000)
    # Compacted as the second turn starts: its module is not read yet, so it cannot be kept.
    watch.main(body(user(text(f"Summary: read {session.paths[0]}. {session.prompts[1]}"))), 12_000)
    assert watch.compactions[0].kept["paths"] == (1, 1)


def test_the_findings_say_what_the_tool_outputs_cache_writes_leave_under_the_target() -> None:
    from benchmarks.ccrow.report import render

    ours = row("agent-repl", 90, 1)
    ours.main_parts = {"written": 50.0, "read": 30.0, "uncached": 0.0, "output": 2.0}
    ours.cost_by_kind = {"main": 82.0, "memory": 8.0}
    theirs = row("claude-code", 100, 1)
    theirs.main_parts = {"written": 50.0, "read": 35.0, "uncached": 0.0, "output": 2.0}
    text = render([theirs, ours], command="cmd", version="9", wall_minutes=1.0, sources={"realistic": "here"})
    assert (
        "cache writes 0.50 (the same tool output as Claude Code's, written once at 1.25x), their cache reads "
        "0.30 (Claude Code's 0.35), its summary and memory requests 0.08; at most 0.8x leaves 0.30" in text
    )
