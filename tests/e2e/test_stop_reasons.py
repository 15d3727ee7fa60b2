"""Every documented stop reason through the real loop, and model facts from the models API."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agent_repl.bootstrap import close_session, open_session
from agent_repl.commands.builtin import model_command
from agent_repl.commands.registry import CommandContext
from agent_repl.core.api.failures import CONTINUE_NUDGE
from agent_repl.core.model.events import ErrorEvent, SystemMessageEvent, TurnEnded
from agent_repl.core.model.messages import AssistantMessage, UserMessage
from agent_repl.emulator.models import (
    default_model_table,
    table_from_specs,
    unique_specs,
    with_context_window,
)
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.session import Session

from .compaction_support import run, settings_for
from .conftest import agent_env, run_agent

MARKER_SCRIPT = "printf 'ran\\n' >> marker.txt # "


def server_for(steps: list[dict[str, Any]], **kwargs: Any) -> EmulatorServer:
    return EmulatorServer(policy=ScriptPolicy({"steps": steps}), **kwargs).start()


def bodies(server: EmulatorServer) -> list[dict[str, Any]]:
    return [e.body for e in server.recordings.messages if e.status == 200]


def ended(events: list[Any]) -> TurnEnded:
    return next(e for e in reversed(events) if isinstance(e, TurnEnded))


async def play(
    steps: list[dict[str, Any]], tmp_path: Path, *prompts: str, **settings: Any
) -> tuple[list[list[Any]], Session, EmulatorServer]:
    """Run `prompts` as turns of one session against the scripted emulator; both are closed after."""
    server = server_for(steps)
    session = await open_session(settings_for(server, tmp_path, **settings), tmp_path)
    try:
        return [await run(session, prompt) for prompt in prompts], session, server
    finally:
        await close_session(session)
        server.stop()


async def test_a_tool_call_cut_by_max_tokens_never_runs_and_is_asked_again_with_room(tmp_path):
    # The command is long: at 400 output tokens the reply ends inside its input JSON.
    command = MARKER_SCRIPT + "x" * 4000
    steps = [{"tools": [{"name": "Bash", "input": {"command": command}}]}, {"text": "Done."}]
    [events], session, server = await play(steps, tmp_path, "write the marker", max_output_tokens=400)
    assert ended(events).reason == "completed"
    # It ran once, from the reply that had room; the cut one (partial input) never did.
    assert (tmp_path / "marker.txt").read_text() == "ran\n"
    assert [b["max_tokens"] for b in bodies(server)] == [400, 64_000, 64_000]
    uses = [b for m in session.messages if isinstance(m, AssistantMessage) for b in m.tool_uses()]
    assert [u.input["command"] for u in uses] == [command]


async def test_a_cut_tool_call_at_the_raised_cap_is_dropped_and_the_model_told(tmp_path):
    cut = {"tools": [{"name": "Bash", "input": {"command": MARKER_SCRIPT}}], "stop_reason": "max_tokens"}
    [events], session, server = await play([cut, cut, {"text": "Stopping here."}], tmp_path, "write the marker")
    assert ended(events).reason == "completed"
    assert not (tmp_path / "marker.txt").exists()
    assert not [b for m in session.messages if isinstance(m, AssistantMessage) for b in m.tool_uses()]
    assert [m for m in session.messages if isinstance(m, UserMessage) and m.content == CONTINUE_NUDGE]
    last = bodies(server)[-1]["messages"]
    assert all(b["type"] != "tool_use" for m in last for b in m["content"])


async def test_model_context_window_exceeded_is_recovered_like_a_cut_reply(tmp_path):
    steps = [{"text": "The first half of the answer", "stop_reason": "model_context_window_exceeded"}, {"text": "and the rest."}]
    [events], _, server = await play(steps, tmp_path, "answer at length")
    assert ended(events).reason == "completed" and ended(events).final_text == "and the rest."
    second = bodies(server)[1]["messages"]
    assert second[-2]["content"] == [{"type": "text", "text": "The first half of the answer"}]
    assert CONTINUE_NUDGE in json.dumps(second[-1])


async def test_a_refusal_is_shown_as_one_and_leaves_the_models_view(tmp_path):
    refusal = {"text": "Here is how you", "stop_reason": "refusal", "stop_details": {"category": "cyber"}}
    steps = [refusal, {"text": "Happy to help with that."}]
    [events, later], session, server = await play(steps, tmp_path, "something refused", "something fine")
    assert ended(events).reason == "refusal"
    notices = [e.message for e in events if isinstance(e, SystemMessageEvent)]
    assert notices and "declined" in notices[0].content and "cyber" in notices[0].content
    assert any(isinstance(e, ErrorEvent) for e in events)
    # The history keeps the refused reply; the next request does not carry it.
    assert any(isinstance(m, AssistantMessage) and m.stop_reason == "refusal" for m in session.messages)
    assert "Here is how you" not in json.dumps(bodies(server)[1])
    assert ended(later).reason == "completed"


def test_print_mode_reports_a_refusal_as_an_error(emulator, project, home):
    emulated = emulator([{"text": "No.", "stop_reason": "refusal"}])
    done = run_agent(["-p", "refused", "--output-format", "json"], cwd=project, env=agent_env(emulated, home))
    result = json.loads(done.stdout)
    assert done.returncode == 1 and result["is_error"] is True


async def test_pause_turn_sends_the_paused_reply_back_and_continues(tmp_path):
    steps = [{"text": "Searching the web first.", "stop_reason": "pause_turn"}, {"text": "Found it."}]
    [events], _, server = await play(steps, tmp_path, "look it up")
    assert ended(events).reason == "completed" and ended(events).final_text == "Found it."
    first, second = bodies(server)
    assert second["messages"][:-1] == first["messages"] or second["messages"][: len(first["messages"])] == first["messages"]
    assert second["messages"][-1] == {"role": "assistant", "content": [{"type": "text", "text": "Searching the web first."}]}


async def test_after_a_fallback_to_a_model_that_does_not_think_no_clear_thinking_is_sent(tmp_path):
    steps = [{"thinking": "Easy.", "text": "One."}, {"text": "Two."}]
    server = server_for(steps)
    settings = settings_for(server, tmp_path, fallback_model="claude-sonnet-4-5", max_retries=0, autocompact=False)
    session = await open_session(settings, tmp_path)
    try:
        await run(session, "first")
        server.faults.next("529")
        events = await run(session, "second")
    finally:
        await close_session(session)
        server.stop()
    assert ended(events).reason == "completed" and session.model == "claude-sonnet-4-5"
    [fallback] = [b for b in bodies(server) if b["model"] == "claude-sonnet-4-5"]
    edits = [e["type"] for e in fallback.get("context_management", {}).get("edits", [])]
    assert "clear_thinking_20251015" not in edits
    # Thinking made by Sonnet 5.5 is not sent to the other model.
    assert all(b["type"] != "thinking" for m in fallback["messages"] for b in m["content"])
    # The pipeline follows the model: its 200K window.
    assert session.projector.state.config.context_window == 200_000


def _table_with(model_id: str, window: int, max_tokens: int) -> dict[str, Any]:
    base = next(s for s in unique_specs(default_model_table()) if s.id == "claude-sonnet-5-5")
    extra = with_context_window(base, window)
    extra = dataclasses.replace(extra, id=model_id, display_name="Test model", max_output_tokens=max_tokens, line=None)
    return table_from_specs([*unique_specs(default_model_table()), extra])


async def test_a_model_missing_from_our_table_gets_its_window_from_the_models_api(tmp_path):
    server = server_for([{"text": "Hi."}], models=_table_with("claude-test-9", 50_000, 8_000))
    settings = settings_for(server, tmp_path, model="claude-test-9")
    session = await open_session(settings, tmp_path)
    try:
        events = await run(session, "hello")
        info = session.model_info
        config = session.projector.state.config
    finally:
        await close_session(session)
        server.stop()
    assert (info.context_window, info.max_output_tokens) == (50_000, 8_000)
    assert config.context_window == 50_000 and config.effective_window < 50_000
    # Its output cap too: the request asks for no more than it can write.
    assert ended(events).reason == "completed" and bodies(server)[-1]["max_tokens"] == 8_000


async def test_model_command_takes_aliases_and_refuses_unknown_ids(tmp_path):
    server = server_for([{"text": "Hi."}])
    session = await open_session(settings_for(server, tmp_path), tmp_path)
    ctx = CommandContext(holder=SimpleNamespace(session=session), registry=None)  # type: ignore[arg-type]
    try:
        switched = await model_command(ctx, "opus")
        assert session.model == "claude-opus-5-5" and switched.model == "claude-opus-5-5"
        assert (await model_command(ctx, "haiku")).model == "claude-haiku-5-5"
        refused = await model_command(ctx, "claude-opus-9")
        assert refused.level == "error" and "unknown model 'claude-opus-9'" in refused.text
        assert "claude-sonnet-5-5" in refused.text and session.model == "claude-haiku-5-5"
    finally:
        await close_session(session)
        server.stop()


def test_the_command_line_resolves_model_aliases(emulator, project, home):
    emulated = emulator([{"text": "Hello from Opus."}])
    done = run_agent(["-p", "hi", "--model", "opus", "--output-format", "json"], cwd=project, env=agent_env(emulated, home))
    assert done.returncode == 0, done.stderr
    assert list(json.loads(done.stdout)["modelUsage"]) == ["claude-opus-5-5"]
    assert emulated.bodies()[-1]["model"] == "claude-opus-5-5"


def _whitespace_fixture(tmp_path: Path) -> Path:
    """A Claude Code session whose replies hold "\\n\\n" text records: one beside a tool call, one
    after a thinking block (the only text of its reply once the thinking is left out)."""
    source = Path(__file__).resolve().parents[1] / "transcript" / "fixtures" / "cc_2.1.22_microcompact.jsonl"
    records = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    out = []
    for record in records:
        out.append(record)
        content = (record.get("message") or {}).get("content")
        if record.get("type") == "assistant" and isinstance(content, list) and content:
            kind = content[0].get("type")
            if kind in ("tool_use", "thinking"):
                blank = json.loads(json.dumps(record))
                blank["uuid"] = record["uuid"][:-4] + "ffff"
                blank["message"]["content"] = [{"type": "text", "text": "\n\n"}]
                out.insert(len(out) - 1, blank) if kind == "tool_use" else out.append(blank)
    path = tmp_path / "spotter-like.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in out) + "\n")
    return path


def test_claude_code_files_with_whitespace_text_records_resume(emulator, project, home, tmp_path):
    fixture = _whitespace_fixture(tmp_path)
    emulated = emulator([{"text": "I can see it."}, {"text": "Still here."}])
    for prompt in ("what happened?", "and then?"):
        done = run_agent(["--resume", str(fixture), "-p", prompt, "--output-format", "json"], cwd=project,
                         env=agent_env(emulated, home))
        assert done.returncode == 0, done.stdout + done.stderr
    sent = json.dumps(emulated.bodies())
    assert '"text": "\\n\\n"' not in sent
