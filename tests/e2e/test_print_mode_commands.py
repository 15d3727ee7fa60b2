"""Slash commands in print mode, as Claude Code runs them: `-p "/context"`, `/cost` and `/compact`
run as commands (no turn), print their output in each format, and name the command in the result;
/compact makes its own request; a slash word no command knows goes to the model as the prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from .conftest import agent_env, read_records, run_agent, transcript_files

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "agent_repl" / "print_mode.schema.json").read_text())


def lines(stdout: str) -> list[dict[str, Any]]:
    parsed = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    validator = Draft202012Validator(SCHEMA)
    for line in parsed:
        problems = [e.message for e in validator.iter_errors(line)]
        assert not problems, (problems, line)
    return parsed


def test_context_runs_as_a_command_in_text_json_and_stream_json_without_a_request(emulator, project, home):
    emulated = emulator([{"text": "unused"}])
    env = agent_env(emulated, home)

    text = run_agent(["-p", "/context"], cwd=project, env=env)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("Context ") and "tokens" in text.stdout
    assert "\x1b[" not in text.stdout  # plain text, no colours

    as_json = run_agent(["-p", "/context", "--output-format", "json"], cwd=project, env=env)
    assert as_json.returncode == 0, as_json.stderr
    [result] = lines(as_json.stdout)
    assert result["type"] == "result" and result["subtype"] == "success" and not result["is_error"]
    assert result["local_command"] == "context" and result["num_turns"] == 0
    assert result["result"].startswith("Context ") and result["total_cost_usd"] == 0

    streamed = run_agent(["-p", "/context", "--output-format", "stream-json", "--verbose"], cwd=project, env=env)
    assert streamed.returncode == 0, streamed.stderr
    init, said, last = lines(streamed.stdout)
    assert init["subtype"] == "init" and last["type"] == "result" and last["local_command"] == "context"
    assert said["type"] == "assistant" and said["message"]["model"] == "<synthetic>"
    assert said["local_command_run"] == {"command": "context", "args": ""}
    assert said["message"]["content"][0]["text"] == last["result"]
    usage = said["context_usage"]
    assert usage["raw_max_tokens"] > 0 and {c["name"] for c in usage["categories"]} >= {"Free space"}
    # No command above needed the model.
    assert emulated.bodies() == []


def test_compact_summarizes_the_resumed_session_with_its_own_request(emulator, project, home):
    emulated = emulator([{"text": "The config sets the port to 8080."}, {"text": "Logs go to var/log."}])
    env = agent_env(emulated, home)
    first = run_agent(["-p", "where is the config?", "--output-format", "json"], cwd=project, env=env)
    session_id = json.loads(first.stdout)["session_id"]
    second = run_agent(["--resume", session_id, "-p", "and the logs?"], cwd=project, env=env)
    assert second.returncode == 0, second.stderr
    requests_before = len(emulated.bodies())

    compacted = run_agent(["--resume", session_id, "-p", "/compact keep the port", "--output-format", "json"], cwd=project, env=env)
    assert compacted.returncode == 0, compacted.stderr
    [result] = lines(compacted.stdout)
    assert result["subtype"] == "success" and result["local_command"] == "compact" and result["num_turns"] == 0
    assert result["result"].startswith("Compacted: ~") and result["total_cost_usd"] > 0
    # One request, the summary: the instructions went with it, and "/compact" was not sent as a prompt.
    [summary] = emulated.bodies()[requests_before:]
    sent = json.dumps(summary)
    assert "keep the port" in sent and "/compact" not in sent
    records = read_records(next(p for p in transcript_files(home) if p.stem == session_id))
    boundaries = [r for r in records if r.get("subtype") == "compact_boundary"]
    assert len(boundaries) == 1 and boundaries[0]["compactMetadata"]["trigger"] == "manual"

    text = run_agent(["--resume", session_id, "-p", "/compact"], cwd=project, env=env)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("Compacted: ~")

    streamed = run_agent(["--resume", session_id, "-p", "/compact", "--output-format", "stream-json", "--verbose"], cwd=project, env=env)
    assert streamed.returncode == 0, streamed.stderr
    kinds = [(line["type"], line.get("subtype")) for line in lines(streamed.stdout)]
    assert kinds == [("system", "init"), ("system", "compact_boundary"), ("assistant", None), ("result", "success")]


def test_cost_prints_the_sessions_cost_and_a_screen_only_command_is_an_error(emulator, project, home):
    emulated = emulator([{"text": "Hello."}])
    env = agent_env(emulated, home)
    first = run_agent(["-p", "hi", "--output-format", "json"], cwd=project, env=env)
    session_id = json.loads(first.stdout)["session_id"]

    cost = run_agent(["--resume", session_id, "-p", "/cost"], cwd=project, env=env)
    assert cost.returncode == 0, cost.stderr
    assert "cost" in cost.stdout and "$" in cost.stdout and "requests" in cost.stdout

    cleared = run_agent(["-p", "/clear", "--output-format", "json"], cwd=project, env=env)
    assert cleared.returncode == 1
    [result] = lines(cleared.stdout)
    assert result["is_error"] and result["local_command"] == "clear"
    assert result["errors"] == ["/clear only works in the interactive app"]
    assert len(emulated.bodies()) == 1


def test_a_slash_word_no_command_knows_goes_to_the_model_as_the_prompt(emulator, project, home):
    emulated = emulator([{"text": "No such command here."}])
    env = agent_env(emulated, home)
    run = run_agent(["-p", "/frobnicate the widgets", "--output-format", "json"], cwd=project, env=env)
    assert run.returncode == 0, run.stderr
    [result] = lines(run.stdout)
    assert "local_command" not in result and result["num_turns"] == 1
    [body] = emulated.bodies()
    last = body["messages"][-1]["content"]
    # The prompt as typed (the pipeline tags it with its snip id, as every prompt).
    assert [b["text"] for b in last if b.get("type") == "text"][-1].startswith("/frobnicate the widgets")
