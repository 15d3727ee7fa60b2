"""Permission modes and the approval of edits, commands and plans, through the real tool runner."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_repl.core.loop.tool_execution import ToolCallOutcome, ToolRuntime, execute_tool_calls
from agent_repl.core.model.messages import ToolUseBlock
from agent_repl.core.permissions.mode import PLAN_MODE_REFUSAL, PermissionMode, next_mode, parse_mode
from agent_repl.core.permissions.rules import Answer, Decision, PermissionPolicy, PermissionRequest
from agent_repl.core.tooling.diffs import FileChange
from agent_repl.tools import builtin_tools


class Asker:
    def __init__(self, *answers: Decision | Answer) -> None:
        self.answers = list(answers)
        self.requests: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Decision | Answer:
        self.requests.append(request)
        return self.answers.pop(0)


def runtime(tmp_path: Path, ask, *, allow=(), deny=()) -> ToolRuntime:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return ToolRuntime(
        tools={t.name: t for t in builtin_tools()},
        cwd=project,
        tool_results_dir=tmp_path / "results",
        permissions=PermissionPolicy.from_rules(allow, deny),
        ask=ask,
        state={},
    )


async def call(rt: ToolRuntime, name: str, **tool_input) -> ToolCallOutcome:
    use = ToolUseBlock(id=f"toolu_{name}_{len(tool_input)}", name=name, input=tool_input)
    outcomes = [o async for o in execute_tool_calls(rt, [use], asyncio.Event()) if isinstance(o, ToolCallOutcome)]
    return outcomes[0]


async def edited(rt: ToolRuntime, path: Path, old: str, new: str) -> ToolCallOutcome:
    return await call(rt, "Edit", file_path=str(path), old_string=old, new_string=new)


async def test_an_edit_asks_with_its_diff_and_yes_once_asks_again(tmp_path: Path) -> None:
    asker = Asker(Decision.ALLOW_ONCE, Decision.ALLOW_ONCE)
    rt = runtime(tmp_path, asker)
    path = rt.cwd / "a.py"
    path.write_text("a = 1\nb = 2\n")
    assert not (await call(rt, "Read", file_path=str(path))).output.is_error
    assert not asker.requests, "reading never asks"
    assert not (await edited(rt, path, "a = 1", "a = 10")).output.is_error
    request = asker.requests[0]
    assert request.tool_name == "Edit" and request.key == str(path)
    change = request.preview
    assert isinstance(change, FileChange)
    assert change.display_path == "a.py" and not change.outside_project
    assert change.hunks[0]["lines"] == ["-a = 1", "+a = 10", " b = 2"]
    assert not (await edited(rt, path, "b = 2", "b = 20")).output.is_error
    assert len(asker.requests) == 2
    assert path.read_text() == "a = 10\nb = 20\n"


async def test_dont_ask_again_switches_to_accept_edits_but_not_outside_the_project(tmp_path: Path) -> None:
    asker = Asker(Decision.ALLOW_ALWAYS, Decision.ALLOW_ONCE)
    rt = runtime(tmp_path, asker)
    inside = rt.cwd / "in.txt"
    outside = tmp_path / "elsewhere.txt"
    assert not (await call(rt, "Write", file_path=str(inside), content="x\n")).output.is_error
    assert rt.mode.mode is PermissionMode.ACCEPT_EDITS
    assert not (await call(rt, "Write", file_path=str(rt.cwd / "two.txt"), content="y\n")).output.is_error
    assert len(asker.requests) == 1
    assert not (await call(rt, "Write", file_path=str(outside), content="z\n")).output.is_error
    assert len(asker.requests) == 2 and asker.requests[1].preview.outside_project
    assert outside.read_text() == "z\n"


async def test_no_with_feedback_tells_the_model_and_changes_nothing(tmp_path: Path) -> None:
    rt = runtime(tmp_path, Asker(Answer(Decision.DENY, "use snake_case names")))
    path = rt.cwd / "a.py"
    path.write_text("x = 1\n")
    await call(rt, "Read", file_path=str(path))
    outcome = await edited(rt, path, "x = 1", "myVar = 1")
    assert outcome.output.is_error
    assert outcome.output.content == (
        f"The user declined this Edit call with {str(path)!r} and said: use snake_case names\n"
        "Do what they asked instead; do not retry the same call."
    )
    assert path.read_text() == "x = 1\n"


async def test_nobody_to_ask_denies_edits_unless_accept_edits(tmp_path: Path) -> None:
    rt = runtime(tmp_path, None)
    path = rt.cwd / "new.txt"
    denied = await call(rt, "Write", file_path=str(path), content="x\n")
    assert denied.output.is_error and "denied" in denied.output.content and not path.exists()
    rt.mode.set(PermissionMode.ACCEPT_EDITS)
    assert not (await call(rt, "Write", file_path=str(path), content="x\n")).output.is_error
    assert path.read_text() == "x\n"
    outside = await call(rt, "Write", file_path=str(tmp_path / "out.txt"), content="x\n")
    assert outside.output.is_error and not (tmp_path / "out.txt").exists()


async def test_deny_rules_hold_in_accept_edits_and_allow_rules_skip_the_prompt(tmp_path: Path) -> None:
    rt = runtime(tmp_path, Asker(), deny=["Write"], allow=["Edit"])
    rt.mode.set(PermissionMode.ACCEPT_EDITS)
    path = rt.cwd / "a.txt"
    assert (await call(rt, "Write", file_path=str(path), content="x\n")).output.is_error
    rt.mode.set(PermissionMode.DEFAULT)
    assert not (await call(rt, "Edit", file_path=str(path), old_string="", new_string="made\n")).output.is_error
    assert path.read_text() == "made\n"


async def test_a_stale_or_unread_file_is_refused_before_anyone_is_asked(tmp_path: Path) -> None:
    asker = Asker()
    rt = runtime(tmp_path, asker)
    path = rt.cwd / "a.txt"
    path.write_text("one\n")
    outcome = await edited(rt, path, "one", "two")
    assert outcome.output.is_error and "has not been read" in outcome.output.content
    assert not asker.requests


async def test_plan_mode_runs_only_read_only_tools_until_the_plan_is_approved(tmp_path: Path) -> None:
    asker = Asker(Answer(Decision.DENY, "also cover the error path"), Decision.ALLOW_ALWAYS)
    rt = runtime(tmp_path, asker)
    rt.mode.set(PermissionMode.PLAN)
    path = rt.cwd / "a.txt"
    path.write_text("one\n")
    assert not (await call(rt, "Read", file_path=str(path))).output.is_error
    for outcome in (await edited(rt, path, "one", "two"), await call(rt, "Bash", command="touch x")):
        assert outcome.output.is_error and outcome.output.content == PLAN_MODE_REFUSAL
    todo = await call(rt, "TodoWrite", todos=[{"content": "Plan", "status": "in_progress", "activeForm": "Planning"}])
    assert not todo.output.is_error
    kept = await call(rt, "ExitPlanMode", plan="1. change one to two")
    assert kept.output.is_error and "also cover the error path" in kept.output.content
    assert rt.mode.mode is PermissionMode.PLAN
    assert asker.requests[0].tool_name == "ExitPlanMode"
    approved = await call(rt, "ExitPlanMode", plan="1. change one to two\n2. handle errors")
    assert not approved.output.is_error and approved.output.structured["plan"].endswith("handle errors")
    assert rt.mode.mode is PermissionMode.ACCEPT_EDITS
    assert not (await edited(rt, path, "one", "two")).output.is_error
    assert path.read_text() == "two\n"


async def test_exit_plan_mode_outside_plan_mode_and_without_anyone_to_approve(tmp_path: Path) -> None:
    rt = runtime(tmp_path, None)
    outcome = await call(rt, "ExitPlanMode", plan="p")
    assert outcome.output.is_error and "not on" in outcome.output.content
    rt.mode.set(PermissionMode.PLAN)
    outcome = await call(rt, "ExitPlanMode", plan="p")
    assert outcome.output.is_error and "Nobody can approve" in outcome.output.content
    assert rt.mode.mode is PermissionMode.PLAN


def test_modes_cycle_and_parse() -> None:
    assert [next_mode(m) for m in PermissionMode] == [
        PermissionMode.ACCEPT_EDITS,
        PermissionMode.PLAN,
        PermissionMode.DEFAULT,
    ]
    assert parse_mode("accept-edits") is PermissionMode.ACCEPT_EDITS
    assert parse_mode("Plan") is PermissionMode.PLAN
    with pytest.raises(ValueError, match="unknown permission mode"):
        parse_mode("yolo")
