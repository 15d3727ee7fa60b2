"""Sonnet 5.5's progress notes end to end: the CLI in a subprocess, the real client, the emulator over
HTTP. The notes the model writes between tool calls come back as thinking blocks, empty unless the
request asks for a display; agent-repl asks on every request, prints them in stream-json, keeps them
in the transcript and sends them back, signed, when the session is resumed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .conftest import agent_env, read_records, run_agent, transcript_files

NOTES = ["Looking at the layout first.", "Now the app module.", "One last check of the helpers."]


def three_notes(project: Path) -> list[dict[str, Any]]:
    patterns = ["**/*.md", "src/app.py", "src/util.py"]
    return [
        {"text": note, "tools": [{"name": "Glob", "input": {"pattern": pattern, "path": str(project)}}]}
        for note, pattern in zip(NOTES, patterns, strict=True)
    ] + [{"text": "Everything looks fine."}, {"text": "Picked up where we were."}]


def thinking_blocks(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        block
        for record in records
        if record.get("type") == "assistant"
        for block in record["message"]["content"]
        if block["type"] == "thinking"
    ]


def test_three_notes_are_asked_for_streamed_kept_and_sent_back_on_resume(emulator, project, home):
    emulated = emulator(three_notes(project))
    env = agent_env(emulated, home)

    run = run_agent(["-p", "check the project", "--output-format", "stream-json", "--verbose"], cwd=project, env=env)
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]

    # Every request asked for the notes' text (the model's own default display is "omitted").
    bodies = emulated.bodies()
    assert len(bodies) == 4
    assert all(body["thinking"] == {"type": "adaptive", "display": "summarized"} for body in bodies)
    assert all("output_config" not in body for body in bodies)  # no effort chosen: the API's default

    # stream-json carries each note as its own assistant line, before the tool call it led to.
    shown = [
        (block["type"], block.get("thinking") or block.get("name"))
        for line in lines
        if line["type"] == "assistant"
        for block in line["message"]["content"]
    ]
    assert shown == [
        ("thinking", NOTES[0]), ("tool_use", "Glob"),
        ("thinking", NOTES[1]), ("tool_use", "Glob"),
        ("thinking", NOTES[2]), ("tool_use", "Glob"),
        ("text", None),
    ]
    thinking_lines = [
        line for line in lines if line["type"] == "assistant" and line["message"]["content"][0]["type"] == "thinking"
    ]
    assert all(line["message"]["content"][0]["signature"] for line in thinking_lines)
    # As Claude Code's lines do, each names the display the requests asked for.
    assert [line.get("thinking_display") for line in thinking_lines] == ["summarized"] * 3
    assert not any("thinking_display" in line for line in lines if line not in thinking_lines)

    # The transcript keeps them, text and signature.
    [transcript] = transcript_files(home)
    kept = thinking_blocks(read_records(transcript))
    assert [b["thinking"] for b in kept] == NOTES
    assert all(b["signature"] for b in kept)

    # A resumed session sends them back unchanged, and the emulator's signature checks accept them.
    session_id = transcript.stem
    again = run_agent(["-p", "go on", "--resume", session_id], cwd=project, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "Picked up where we were."
    resumed = emulated.bodies()[-1]
    sent = [
        block
        for message in resumed["messages"]
        if message["role"] == "assistant"
        for block in message["content"]
        if block["type"] == "thinking"
    ]
    assert [b["thinking"] for b in sent] == NOTES
    assert [b["signature"] for b in sent] == [b["signature"] for b in kept]
    assert all(e.status == 200 for e in emulated.server.recordings.messages)


def test_effort_and_up_front_thinking_come_from_the_settings(emulator, project, home):
    emulated = emulator([{"text": "Short answer."}])
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"effort": "low", "thinking": "between_tools"}))
    run = run_agent(["-p", "hello"], cwd=project, env=agent_env(emulated, home))
    assert run.returncode == 0, run.stderr
    [body] = emulated.bodies()
    assert body["thinking"] == {"type": "between_tools"}
    assert body["output_config"] == {"effort": "low"}


def test_the_environment_chooses_the_effort(emulator, project, home):
    emulated = emulator([{"text": "Short answer."}])
    run = run_agent(["-p", "hello"], cwd=project, env=agent_env(emulated, home, AGENT_REPL_EFFORT="max"))
    assert run.returncode == 0, run.stderr
    [body] = emulated.bodies()
    assert body["output_config"] == {"effort": "max"}
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}


def test_a_model_that_does_not_think_by_default_gets_no_thinking_field(emulator, project, home):
    emulated = emulator([{"text": "Short answer."}])
    run = run_agent(["-p", "hello", "--model", "claude-haiku-4-5"], cwd=project, env=agent_env(emulated, home))
    assert run.returncode == 0, run.stderr
    [body] = emulated.bodies()
    assert "thinking" not in body and "output_config" not in body


def test_the_updates_display_sends_its_beta_and_still_shows_the_notes(emulator, project, home):
    emulated = emulator(three_notes(project))
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"thinking_display": "updates"}))
    run = run_agent(["-p", "check the project", "--output-format", "stream-json", "--verbose"], cwd=project, env=agent_env(emulated, home))
    assert run.returncode == 0, run.stderr
    requests = emulated.message_requests()
    assert len(requests) == 4
    assert all(r.body["thinking"] == {"type": "adaptive", "display": "updates"} for r in requests)
    assert all("thinking-display-updates-2026-08-18" in r.headers["anthropic-beta"].split(",") for r in requests)
    notes = [
        block["thinking"]
        for line in map(json.loads, run.stdout.splitlines())
        if line["type"] == "assistant"
        for block in line["message"]["content"]
        if block["type"] == "thinking"
    ]
    assert notes == NOTES
