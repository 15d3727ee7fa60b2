"""Print mode's json and stream-json follow Claude Code's line schema (agent_repl/print_mode.schema.json):
the CLI in a subprocess against the emulator, every line checked by a JSON Schema validator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from .conftest import agent_env, run_agent

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "agent_repl" / "print_mode.schema.json"
STEPS = [
    {
        "text": "Checking two things.",
        "tools": [
            {"name": "Bash", "input": {"command": "echo allowed-run"}},
            {"name": "Bash", "input": {"command": "touch denied.txt"}},
        ],
    },
    {"text": "One ran, one was refused."},
]


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _valid(validator: Draft202012Validator, line: dict[str, Any]) -> dict[str, Any]:
    problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(line)]
    assert not problems, f"{line.get('type')} line does not follow the schema: {problems}\n{line}"
    return line


def test_stream_json_lines_are_claude_codes_with_partial_messages(emulator, project: Path, home: Path, validator):
    emulated = emulator(STEPS)
    done = run_agent(
        ["-p", "check", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
         "--allowed-tools", "Bash(echo:*)"],
        cwd=project,
        env=agent_env(emulated, home),
    )
    lines = [_valid(validator, json.loads(line)) for line in done.stdout.splitlines()]
    kinds = [(line["type"], line.get("subtype")) for line in lines]
    assert kinds[0] == ("system", "init") and kinds[-1] == ("result", "success")
    between = {kind for kind, _ in kinds[1:-1]}
    assert between == {"assistant", "user", "stream_event"}
    assert {line["session_id"] for line in lines} == {lines[0]["session_id"]}
    # The assistant lines carry the API message; the tool results come back as user lines.
    tool_uses = [b for line in lines if line["type"] == "assistant" for b in line["message"]["content"] if b["type"] == "tool_use"]
    results = [b for line in lines if line["type"] == "user" for b in line["message"]["content"]]
    assert [b["tool_use_id"] for b in results] == [b["id"] for b in tool_uses]
    events = [line["event"]["type"] for line in lines if line["type"] == "stream_event"]
    assert events[0] == "message_start" and events[-1] == "message_stop" and "content_block_delta" in events
    assert not (project / "denied.txt").exists()
    denials = lines[-1]["permission_denials"]
    assert denials == [{"tool_name": "Bash", "tool_use_id": tool_uses[1]["id"], "tool_input": {"command": "touch denied.txt"}}]


def test_json_result_has_denials_api_time_model_usage_and_uuid(emulator, project: Path, home: Path, validator):
    emulated = emulator(STEPS)
    done = run_agent(
        ["-p", "check", "--output-format", "json", "--allowed-tools", "Bash(echo:*)"],
        cwd=project,
        env=agent_env(emulated, home),
    )
    result = _valid(validator, json.loads(done.stdout))
    assert result["result"] == "One ran, one was refused." and result["is_error"] is False
    assert [d["tool_input"] for d in result["permission_denials"]] == [{"command": "touch denied.txt"}]
    assert 0 < result["duration_api_ms"] <= result["duration_ms"]
    [(model, usage)] = result["modelUsage"].items()
    assert model == emulated.server.recordings.messages[0].body["model"]
    assert usage["outputTokens"] == result["usage"]["output_tokens"]
    assert usage["costUSD"] == pytest.approx(result["total_cost_usd"], abs=1e-5)  # each rounded to 6 places


def test_an_error_result_follows_the_schema_too(emulator, project: Path, home: Path, validator):
    emulated = emulator([{"tools": [{"name": "Bash", "input": {"command": "echo again"}}]}] * 3)
    done = run_agent(
        ["-p", "loop", "--output-format", "json", "--max-turns", "1", "--allowed-tools", "Bash(echo:*)"],
        cwd=project,
        env=agent_env(emulated, home),
    )
    result = _valid(validator, json.loads(done.stdout))
    assert result["subtype"] == "error_max_turns" and result["is_error"] is True and result["errors"]
