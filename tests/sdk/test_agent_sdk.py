"""The Claude Agent SDK (Python) with agent-repl as its engine: `cli_path` is the only change.

Each scenario also ran with the real Claude Code CLI 2.1.332 as `cli_path` against the same
emulator (`AGENT_REPL_SDK_CLI=/usr/bin/claude`); its docstring says what that run gave.
Before agent-repl spoke the SDK's transport, every one of them failed at start (exit 2 on
`--input-format`).
"""

from __future__ import annotations

from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolUseBlock,
    create_sdk_mcp_server,
    query,
    tool,
)

from .conftest import collect, kinds, result_text, tool_results
from .scripted import Step


def _file_writer(name: str, text: str) -> Step:
    return Step(tools=[("Bash", {"command": f"echo {text} > {name}"})])


async def test_query_runs_one_turn_with_a_tool(sdk):
    """Control (Claude Code 2.1.332): SystemMessage:init, AssistantMessage (Bash tool_use),
    UserMessage (its tool_result), AssistantMessage (text), ResultMessage success, num_turns 2."""
    harness = sdk({"hello": [Step(tools=[("Bash", {"command": "echo hi-there"})]), Step(text="All done.")]})
    messages = await collect(
        query(prompt="say hello", options=harness.options(permission_mode="bypassPermissions"))
    )

    assert kinds(messages) == [
        "SystemMessage:init",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "ResultMessage",
    ]
    [block] = tool_results(messages)
    assert result_text(block).strip() == "hi-there" and not block.is_error
    result = messages[-1]
    assert (result.subtype, result.is_error, result.num_turns, result.result) == (
        "success",
        False,
        2,
        "All done.",
    )
    assert result.session_id == messages[0].data["session_id"]


async def test_client_keeps_one_session_over_two_turns(sdk):
    """Control: each turn opens with SystemMessage:init and ends with a success ResultMessage;
    both results name one session, and the second request holds the first exchange."""
    harness = sdk({"first": [Step(text="First answer.")], "second": [Step(text="Second answer.")]})
    async with ClaudeSDKClient(harness.options(permission_mode="bypassPermissions")) as client:
        await client.query("the first question")
        one = await collect(client.receive_response())
        await client.query("the second question")
        two = await collect(client.receive_response())

    assert kinds(one) == kinds(two) == ["SystemMessage:init", "AssistantMessage", "ResultMessage"]
    assert (one[-1].result, two[-1].result) == ("First answer.", "Second answer.")
    assert one[-1].session_id == two[-1].session_id
    last = harness.main_requests()[-1]
    said = str(last["messages"])
    assert "the first question" in said and "First answer." in said and "the second question" in said


async def test_can_use_tool_allows_with_a_changed_input(sdk):
    """Control: one can_use_tool question for Bash with the model's command; the command that ran
    was the callback's (`rewritten` in out.txt); result success."""
    harness = sdk({"write": [_file_writer("out.txt", "original"), Step(text="Written.")]})
    asked: list[tuple[str, dict[str, Any]]] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append((name, dict(tool_input)))
        return PermissionResultAllow(updated_input={**tool_input, "command": "echo rewritten > out.txt"})

    async with ClaudeSDKClient(harness.options(can_use_tool=can_use_tool)) as client:
        await client.query("write the file")
        messages = await collect(client.receive_response())

    assert asked == [("Bash", {"command": "echo original > out.txt"})]
    assert (harness.cwd / "out.txt").read_text() == "rewritten\n"
    assert messages[-1].subtype == "success" and messages[-1].result == "Written."


async def test_can_use_tool_denies_with_a_message_the_model_reads(sdk):
    """Control: the tool_result is an error holding the callback's message, the file is not
    written, the ResultMessage (success) lists the Bash call in permission_denials."""
    harness = sdk({"write": [_file_writer("out.txt", "original"), Step(text="Understood.")]})

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        return PermissionResultDeny(message="not in this folder")

    async with ClaudeSDKClient(harness.options(can_use_tool=can_use_tool)) as client:
        await client.query("write the file")
        messages = await collect(client.receive_response())

    [block] = tool_results(messages)
    assert block.is_error and "not in this folder" in result_text(block)
    assert not (harness.cwd / "out.txt").exists()
    result = messages[-1]
    assert result.subtype == "success" and result.result == "Understood."
    assert [d["tool_name"] for d in result.permission_denials] == ["Bash"]


async def test_can_use_tool_deny_with_interrupt_ends_the_turn(sdk):
    """Control: after the denial with interrupt=True no further model request is made for the
    turn; the ResultMessage is error_during_execution."""
    harness = sdk({"write": [_file_writer("out.txt", "original"), Step(text="Never said.")]})

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        return PermissionResultDeny(message="stop everything", interrupt=True)

    async with ClaudeSDKClient(harness.options(can_use_tool=can_use_tool)) as client:
        await client.query("write the file")
        messages = await collect(client.receive_response())

    texts = [
        b.text for m in messages if isinstance(m, AssistantMessage) for b in m.content if hasattr(b, "text")
    ]
    assert "Never said." not in texts
    assert not (harness.cwd / "out.txt").exists()
    assert messages[-1].subtype == "error_during_execution"


async def test_a_pre_tool_use_hook_callback_blocks_a_call(sdk):
    """Control: the callback got a PreToolUse input naming Bash and its command; its deny made
    the tool_result an error carrying its reason; the file was not written; result success."""
    harness = sdk({"write": [_file_writer("out.txt", "original"), Step(text="Blocked, fine.")]})
    seen: list[dict[str, Any]] = []

    async def guard(hook_input: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append(dict(hook_input))
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "the guard says no",
            }
        }

    options = harness.options(
        permission_mode="bypassPermissions",
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]},
    )
    async with ClaudeSDKClient(options) as client:
        await client.query("write the file")
        messages = await collect(client.receive_response())

    [hook_input] = seen
    assert hook_input["hook_event_name"] == "PreToolUse" and hook_input["tool_name"] == "Bash"
    assert hook_input["tool_input"] == {"command": "echo original > out.txt"}
    [block] = tool_results(messages)
    assert block.is_error and "the guard says no" in result_text(block)
    assert not (harness.cwd / "out.txt").exists()
    assert messages[-1].subtype == "success"


async def test_interrupt_stops_a_long_bash(sdk):
    """Control: interrupt() while the Bash call runs ends the turn early with a ResultMessage
    error_during_execution; the next query in the same client answers normally (success)."""
    long_command = "python3 -c 'import time; time.sleep(60)'"
    harness = sdk(
        {
            "wait": [Step(tools=[("Bash", {"command": long_command})]), Step(text="Never said.")],
            "again": [Step(text="Still here.")],
        }
    )
    async with ClaudeSDKClient(harness.options(permission_mode="bypassPermissions")) as client:
        await client.query("wait for it")
        first: list[Any] = []
        async for message in client.receive_response():
            first.append(message)
            if isinstance(message, AssistantMessage) and any(
                isinstance(b, ToolUseBlock) for b in message.content
            ):
                await client.interrupt()
        await client.query("again please")
        second = await collect(client.receive_response())

    assert isinstance(first[-1], ResultMessage) and first[-1].subtype == "error_during_execution"
    assert "Never said." not in str(first)
    assert second[-1].subtype == "success" and second[-1].result == "Still here."


async def test_set_permission_mode_lets_the_next_edit_run(sdk):
    """Control: in default mode, with nobody to ask, the Write is denied (error tool_result, in
    permission_denials); after set_permission_mode("acceptEdits") the next turn's Write runs.
    Asking for bypassPermissions in a session not started with it is refused (the SDK raises)."""
    harness = sdk(
        {
            "first": [Step(tools=[("Write", {"file_path": "one.txt", "content": "1"})]), Step(text="Tried.")],
            "second": [Step(tools=[("Write", {"file_path": "two.txt", "content": "2"})]), Step(text="Done.")],
        }
    )
    # A path relative to the project in the scenario: the emulator's script names no temp folder.
    for steps in harness.model.scenarios.values():
        name, tool_input = steps[0].tools[0]
        steps[0].tools[0] = (name, {**tool_input, "file_path": str(harness.cwd / tool_input["file_path"])})
    async with ClaudeSDKClient(harness.options(permission_mode="default")) as client:
        await client.query("first write")
        one = await collect(client.receive_response())
        with pytest.raises(Exception, match="bypassPermissions"):
            await client.set_permission_mode("bypassPermissions")
        await client.set_permission_mode("acceptEdits")
        await client.query("second write")
        two = await collect(client.receive_response())

    [denied] = tool_results(one)
    assert denied.is_error and not (harness.cwd / "one.txt").exists()
    assert [d["tool_name"] for d in one[-1].permission_denials] == ["Write"]
    [ran] = tool_results(two)
    assert not ran.is_error and (harness.cwd / "two.txt").read_text() == "2"
    assert two[-1].subtype == "success"


async def test_resume_continues_a_finished_session(sdk):
    """Control: the resumed run reports the first run's session id in its result, and its model
    request carries the first run's prompt and answer before the new prompt."""
    harness = sdk({"remember": [Step(text="I will remember 42.")], "recall": [Step(text="It was 42.")]})
    first = await collect(
        query(prompt="remember the number", options=harness.options(permission_mode="bypassPermissions"))
    )
    session_id = first[-1].session_id
    options = harness.options(permission_mode="bypassPermissions", resume=session_id)
    second = await collect(query(prompt="recall the number", options=options))

    assert second[-1].subtype == "success" and second[-1].result == "It was 42."
    assert second[-1].session_id == session_id
    said = str(harness.main_requests()[-1]["messages"])
    assert (
        said.index("remember the number")
        < said.index("I will remember 42.")
        < said.index("recall the number")
    )


async def test_an_in_process_sdk_mcp_server_tool_runs(sdk):
    """Control: the init line lists mcp__calc__add; the model's call reaches the Python function
    (called once with a=2, b=3) and its text is the tool_result; result success."""
    calls: list[dict[str, Any]] = []

    @tool("add", "Add two integers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(dict(args))
        return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}

    harness = sdk({"add": [Step(tools=[("mcp__calc__add", {"a": 2, "b": 3})]), Step(text="It is 5.")]})
    options = harness.options(
        permission_mode="bypassPermissions",
        mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add])},
    )
    async with ClaudeSDKClient(options) as client:
        await client.query("add two and three")
        messages = await collect(client.receive_response())

    assert "mcp__calc__add" in messages[0].data["tools"]
    assert calls == [{"a": 2, "b": 3}]
    [block] = tool_results(messages)
    assert "sum=5" in result_text(block) and not block.is_error
    assert messages[-1].subtype == "success" and messages[-1].result == "It is 5."
