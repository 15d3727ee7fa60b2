"""One channel to the screen: every entry a turn appends to the history is in one of its events, in
history order, and the turn ends with the next request's estimate, so nothing reads the history or
projects it again to learn what the turn produced (docs/architecture.md 4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.model.events import (
    AgentEvent,
    AssistantMessageEvent,
    EntryAppended,
    SystemMessageEvent,
    TextDelta,
    ToolResultEvent,
    TurnEnded,
    TurnStarted,
)
from agent_repl.core.model.messages import Message
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.session import Session
from tests.e2e.compaction_support import settings_for
from tests.e2e.hook_support import hook_script, hooks_setting

BASH = {"name": "Bash", "input": {"command": "echo hi"}}
CUT = {"text": "Half", "stop_reason": "max_tokens"}


def announced(events: list[AgentEvent]) -> list[Message]:
    """The history entries the events carry, each once, in the order they came."""
    seen: dict[str, Message] = {}
    for event in events:
        if isinstance(event, EntryAppended | TurnStarted | AssistantMessageEvent | ToolResultEvent | SystemMessageEvent):
            seen.setdefault(event.message.uuid, event.message)
    return list(seen.values())


async def turn(
    steps: list[dict[str, Any]], tmp_path: Path, *, shell: str | None = None, interrupt_at: type | None = None, **settings: Any
) -> tuple[list[AgentEvent], Session, int]:
    """The events of one turn ("go", or a `!command`), the session after it, and how long its
    history was before it."""
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps}))
    server.start()
    if interrupt_at is not None:
        server.faults.stall_seconds = 30
        server.faults.next("stall")
    settings.setdefault("autocompact", False)
    session = await open_session(settings_for(server, tmp_path, **settings), tmp_path)
    before = len(session.messages)
    events: list[AgentEvent] = []
    try:
        async for event in session.run_shell(shell) if shell else session.run_turn("go"):
            events.append(event)
            if interrupt_at is not None and isinstance(event, interrupt_at):
                session.interrupt()
    finally:
        await close_session(session)
        server.stop()
    return events, session, before


def stop_hook_once(tmp_path: Path) -> dict[str, Any]:
    body = 'if not data["stop_hook_active"]:\n    print(json.dumps({"decision": "block", "reason": "test it"}))\n'
    return {"hooks": hooks_setting("Stop", hook_script(tmp_path / "hooks", "stop", body))}


@pytest.mark.parametrize(
    "case",
    ["tool_round", "cut_reply_nudged", "stop_hook_sends_back", "interrupted", "shell"],
)
async def test_every_entry_a_turn_appends_is_in_its_events_in_history_order(tmp_path, case):
    match case:
        case "tool_round":
            events, session, before = await turn([{"tools": [BASH]}, {"text": "Done."}], tmp_path)
        case "cut_reply_nudged":  # the nudge to go on is a meta entry no other event carries
            events, session, before = await turn([CUT, CUT, {"text": "Rest."}], tmp_path)
        case "stop_hook_sends_back":
            events, session, before = await turn([{"text": "Done."}, {"text": "Tested."}], tmp_path, **stop_hook_once(tmp_path))
        case "interrupted":  # the interruption's marker comes after the kept partial reply
            events, session, before = await turn([{"text": "A reply that stalls."}], tmp_path, interrupt_at=TextDelta)
        case _:
            events, session, before = await turn([], tmp_path, shell="echo from-the-shell")
    appended = session.messages[before:]
    assert [m.uuid for m in announced(events)] == [m.uuid for m in appended]
    assert any(isinstance(e, EntryAppended) for e in events)
    assert isinstance(events[-1], TurnEnded)


async def test_a_shell_commands_output_comes_as_an_entry(tmp_path):
    events, _, _ = await turn([], tmp_path, shell="echo from-the-shell")
    started = next(i for i, e in enumerate(events) if isinstance(e, TurnStarted))
    [output] = [e.message for e in events[started:] if isinstance(e, EntryAppended)]
    assert output.text() == "<bash-stdout>from-the-shell</bash-stdout>"


@pytest.mark.parametrize("steps", [[{"text": "Done."}], [{"tools": [BASH]}, {"text": "Done."}]], ids=["reply", "tool_round"])
async def test_the_turn_ends_with_the_estimate_the_next_request_would_be_projected_at(tmp_path, steps):
    events, session, _ = await turn(steps, tmp_path)
    ended = events[-1]
    assert isinstance(ended, TurnEnded) and ended.next_request_tokens is not None
    assert ended.next_request_tokens == session.projector.project(session.messages, dry_run=True).estimated_tokens


async def test_a_one_request_turn_projects_the_history_once(tmp_path):
    """The live view is the only projection: session memory reads the estimate `TurnEnded` carries."""
    server = EmulatorServer(policy=ScriptPolicy({"steps": [{"text": "Done."}]}))
    server.start()
    session = await open_session(settings_for(server, tmp_path, autocompact=True), tmp_path)
    assert session.after_turn_hooks, "session memory measures the conversation after each turn"
    calls: list[bool] = []
    project = session.projector.project

    def counted(history: list[Message], *, dry_run: bool = False) -> Any:
        calls.append(dry_run)
        return project(history, dry_run=dry_run)

    session.projector.project = counted  # type: ignore[method-assign]
    try:
        events = [event async for event in session.run_turn("go")]
    finally:
        await close_session(session)
        server.stop()
    assert isinstance(events[-1], TurnEnded) and events[-1].num_requests == 1
    assert calls == [False]
