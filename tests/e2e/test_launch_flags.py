"""The flags the Agent SDKs pass (Claude Code's spellings), each seen to do its thing: the CLI in a
subprocess, the emulator over HTTP as the model, the requests it recorded as the evidence."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from .conftest import agent_env, run_agent, transcript_files

TOUCH = [{"tools": [{"name": "Bash", "input": {"command": "touch made.txt"}}]}, {"text": "Done."}]


def _lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def _system_text(body: dict[str, Any]) -> str:
    return "".join(block["text"] for block in body["system"])


def test_an_unknown_flag_is_named_with_exit_2_and_no_traceback(emulator, project: Path, home: Path):
    env = agent_env(emulator([{"text": "never"}]), home)
    done = run_agent(["-p", "hi", "--no-such-flag", "x"], cwd=project, env=env)
    assert done.returncode == 2
    assert "--no-such-flag" in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1  # one line, not the usage block


def test_stream_json_output_needs_verbose_as_claude_code_does(emulator, project: Path, home: Path):
    emulated = emulator([{"text": "Hello."}])
    env = agent_env(emulated, home)
    refused = run_agent(["-p", "hi", "--output-format", "stream-json"], cwd=project, env=env)
    assert refused.returncode == 2 and "--verbose" in refused.stderr
    assert emulated.bodies() == []
    done = run_agent(["-p", "hi", "--output-format", "stream-json", "--verbose"], cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    assert _lines(done.stdout)[-1]["result"] == "Hello."


def test_system_prompt_flags_replace_and_append(emulator, project: Path, home: Path, tmp_path: Path):
    emulated = emulator([{"text": "a"}, {"text": "b"}, {"text": "c"}])
    env = agent_env(emulated, home)
    default = run_agent(["-p", "hi"], cwd=project, env=env)
    assert default.returncode == 0, default.stderr
    replaced = run_agent(["-p", "hi", "--system-prompt", "You are a test double.", "--append-system-prompt", "Be brief."],
                         cwd=project, env=env)  # fmt: skip
    assert replaced.returncode == 0, replaced.stderr
    appended_file = tmp_path / "extra.txt"
    appended_file.write_text("Answer in French.")
    empty = run_agent(["-p", "hi", "--system-prompt", "", "--append-system-prompt-file", str(appended_file)],
                      cwd=project, env=env)  # fmt: skip
    assert empty.returncode == 0, empty.stderr
    ours, theirs, bare = (_system_text(body) for body in emulated.bodies())
    assert theirs.startswith("You are a test double.") and theirs.endswith("Be brief.")
    assert ours.split("\n\n")[0] not in theirs  # our instructions are gone
    assert str(project) in theirs and str(project) in bare  # the working directory stays
    assert bare.startswith("Environment:") and bare.endswith("Answer in French.")
    both = run_agent(["-p", "hi", "--system-prompt", "x", "--system-prompt-file", str(appended_file)], cwd=project, env=env)
    assert both.returncode == 2 and "--system-prompt-file" in both.stderr


def test_bypass_permissions_runs_unasked_and_says_so(emulator, project: Path, home: Path):
    env = agent_env(emulator(TOUCH), home)
    done = run_agent(["-p", "make it", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions"],
                     cwd=project, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = _lines(done.stdout)
    assert lines[0]["permissionMode"] == "bypassPermissions"
    assert (project / "made.txt").exists() and lines[-1]["permission_denials"] == []


def test_dont_ask_refuses_what_no_rule_allows_and_runs_what_one_does(emulator, project: Path, home: Path):
    steps = [{"tools": [{"name": "Bash", "input": {"command": "echo fine"}},
                        {"name": "Bash", "input": {"command": "touch made.txt"}}]}, {"text": "Done."}]  # fmt: skip
    env = agent_env(emulator(steps), home)
    done = run_agent(["-p", "go", "--output-format", "stream-json", "--verbose", "--permission-mode", "dontAsk",
                      "--allowedTools", "Bash(echo:*)"], cwd=project, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = _lines(done.stdout)
    assert lines[0]["permissionMode"] == "dontAsk"
    assert [d["tool_input"] for d in lines[-1]["permission_denials"]] == [{"command": "touch made.txt"}]
    assert not (project / "made.txt").exists()


def test_disallowed_tools_beat_allowed_tools_in_both_spellings(emulator, project: Path, home: Path):
    steps = [{"tools": [{"name": "Bash", "input": {"command": "echo fine"}},
                        {"name": "Bash", "input": {"command": "touch made.txt"}}]}, {"text": "Done."}]  # fmt: skip
    env = agent_env(emulator(steps), home)
    done = run_agent(["-p", "go", "--output-format", "json", "--allowed-tools", "Bash(echo:*) Bash(touch:*)",
                      "--disallowedTools", "Bash(touch:*)"], cwd=project, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [d["tool_input"] for d in json.loads(done.stdout)["permission_denials"]] == [{"command": "touch made.txt"}]
    assert not (project / "made.txt").exists()


def test_settings_flag_and_setting_sources(emulator, project: Path, home: Path):
    emulated = emulator(TOUCH + TOUCH)
    env = agent_env(emulated, home)
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(touch:*)"]}}))
    skipped = run_agent(["-p", "make it", "--output-format", "json", "--setting-sources", "project"], cwd=project, env=env)
    assert skipped.returncode == 0, skipped.stderr
    assert json.loads(skipped.stdout)["permission_denials"] != [] and not (project / "made.txt").exists()
    denied = run_agent(["-p", "make it", "--output-format", "json", "--settings", '{"permissions": {"deny": ["Bash"]}}'],
                       cwd=project, env=env)  # fmt: skip
    assert denied.returncode == 0, denied.stderr
    assert json.loads(denied.stdout)["permission_denials"] != [] and not (project / "made.txt").exists()
    wrong = run_agent(["-p", "x", "--settings", '{"no_such_key": 1}'], cwd=project, env=env)
    assert wrong.returncode == 2 and "no_such_key" in wrong.stderr and "Traceback" not in wrong.stderr


def test_session_id_and_fork_session(emulator, project: Path, home: Path):
    env = agent_env(emulator([{"text": "one"}, {"text": "two"}, {"text": "three"}]), home)
    chosen = str(uuid.uuid4())
    first = run_agent(["-p", "hi", "--output-format", "json", "--session-id", chosen], cwd=project, env=env)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["session_id"] == chosen
    [path] = transcript_files(home)
    assert path.stem == chosen
    before = path.read_text()
    again = run_agent(["-p", "hi", "--session-id", chosen], cwd=project, env=env)
    assert again.returncode == 2 and "already exists" in again.stderr
    forked = run_agent(["-p", "more", "--output-format", "json", "--resume", chosen, "--fork-session"], cwd=project, env=env)
    assert forked.returncode == 0, forked.stderr
    fork_id = json.loads(forked.stdout)["session_id"]
    assert fork_id != chosen and path.read_text() == before
    assert {p.stem for p in transcript_files(home)} == {chosen, fork_id}
    cont = run_agent(["-p", "on", "--output-format", "stream-json", "--verbose", "--continue"], cwd=project, env=env)
    assert cont.returncode == 0, cont.stderr
    assert _lines(cont.stdout)[0]["session_id"] in {chosen, fork_id}


def test_agents_flag_adds_a_sub_agent_the_task_tool_offers(emulator, project: Path, home: Path):
    emulated = emulator([{"text": "ok"}])
    agents = {"reviewer": {"description": "Reviews the change for bugs", "prompt": "Review it.", "tools": ["Read"]}}
    done = run_agent(["-p", "hi", "--agents", json.dumps(agents)], cwd=project, env=agent_env(emulated, home))
    assert done.returncode == 0, done.stderr
    [task] = [tool for tool in emulated.bodies()[0]["tools"] if tool["name"] == "Task"]
    assert "reviewer" in task["description"] and "Reviews the change for bugs" in task["description"]
    bad = run_agent(["-p", "hi", "--agents", '{"x": {"prompt": "p"}}'], cwd=project, env=agent_env(emulated, home))
    assert bad.returncode == 2 and "description" in bad.stderr


def test_max_budget_usd_stops_before_the_next_request(emulator, project: Path, home: Path):
    emulated = emulator([{"tools": [{"name": "Bash", "input": {"command": "echo 1"}}]}, {"text": "never sent"}])
    done = run_agent(["-p", "go", "--output-format", "json", "--dangerously-skip-permissions", "--max-budget-usd", "0.000001"],
                     cwd=project, env=agent_env(emulated, home))  # fmt: skip
    result = json.loads(done.stdout)
    assert result["subtype"] == "error_max_budget_usd" and result["is_error"] is True
    assert len(emulated.bodies()) == 1 and done.returncode == 1
