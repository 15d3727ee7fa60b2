"""Issue 3 acceptance, end to end: the CLI in a subprocess, the real client, the emulator over HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from agent_repl.core.tooling.persisted_output import PERSISTED_OUTPUT_TAG

from .conftest import agent_env, read_records, run_agent, strip_cache_control, transcript_files


def tool_results(body: dict) -> dict[str, dict]:
    return {
        block["tool_use_id"]: block
        for message in body["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "tool_result"
    }


def result_text(block: dict) -> str:
    content = block.get("content", "")
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def test_print_mode_runs_every_tool_for_real_and_resume_repeats_the_cached_prefix(emulator, project, home):
    steps = [
        {
            "text": "Looking around.",
            "tools": [
                {"name": "Glob", "input": {"pattern": "**/*.py", "path": str(project)}},
                {"name": "Grep", "input": {"pattern": "TODO", "path": str(project), "output_mode": "content"}},
                {"name": "Read", "input": {"file_path": str(project / "README.md")}},
            ],
        },
        {"tools": [{"name": "Bash", "input": {"command": "echo made > made.txt && wc -l README.md"}}]},
        {"text": "All four tools ran."},
        {"text": "Continuing where we left off."},
    ]
    emulated = emulator(steps)
    env = agent_env(emulated, home)

    first = run_agent(["-p", "look around", "--output-format", "json", "--allowed-tools", "Bash"], cwd=project, env=env)
    assert first.returncode == 0, first.stderr
    result = json.loads(first.stdout)
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["result"] == "All four tools ran."
    assert result["num_turns"] == 3
    assert set(result["usage"]) == {
        "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens",
        "cache_creation", "server_tool_use", "output_tokens_details", "service_tier", "inference_geo", "speed",
    }
    assert result["usage"]["cache_creation"]["ephemeral_5m_input_tokens"] + result["usage"]["cache_creation"][
        "ephemeral_1h_input_tokens"
    ] == result["usage"]["cache_creation_input_tokens"]
    assert result["total_cost_usd"] > 0
    session_id = result["session_id"]

    # Bash really ran, in the project directory.
    assert (project / "made.txt").read_text() == "made\n"
    bodies = emulated.bodies()
    assert len(bodies) == 3
    results = tool_results(bodies[-1])
    texts = {name: result_text(block) for name, block in zip(["Glob", "Grep", "Read", "Bash"], results.values(), strict=True)}
    assert "src/app.py" in texts["Glob"] and "src/util.py" in texts["Glob"]
    assert "TODO: greet properly" in texts["Grep"] and "TODO: make configurable" in texts["Grep"]
    assert "1\t# Demo project" in texts["Read"]
    assert "3 README.md" in texts["Bash"]
    assert not any(block.get("is_error") for block in results.values())

    # The transcript holds every step, in Claude Code's record shape.
    [transcript] = transcript_files(home)
    assert transcript.stem == session_id
    records = read_records(transcript)
    tool_uses = [r["message"]["content"][0]["name"] for r in records if r["type"] == "assistant"
                 and r["message"]["content"][0]["type"] == "tool_use"]
    assert tool_uses == ["Glob", "Grep", "Read", "Bash"]
    assert sum(1 for r in records if r["type"] == "user" and "toolUseResult" in r) == 4
    assert "sk-ant-test-e2e-key" not in transcript.read_text()

    # Resume: the first request of the second run repeats the last request of the first run up to its
    # last breakpoint, and the emulator reads exactly that prefix from its cache.
    second = run_agent(["--resume", session_id, "-p", "go on", "--output-format", "json"], cwd=project, env=env)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["result"] == "Continuing where we left off."
    assert json.loads(second.stdout)["session_id"] == session_id
    exchanges = emulated.message_requests()
    last_of_first, first_of_second = exchanges[2], exchanges[3]
    before, after = last_of_first.body, first_of_second.body
    for key in ("tools", "system"):
        assert json.dumps(strip_cache_control(after[key])) == json.dumps(strip_cache_control(before[key]))
    last = len(before["messages"]) - 1
    assert "cache_control" in before["messages"][last]["content"][-1]
    assert json.dumps(strip_cache_control(after["messages"][: last + 1])) == json.dumps(
        strip_cache_control(before["messages"])
    )
    usage_before, usage_after = last_of_first.usage, first_of_second.usage
    assert usage_after["cache_read_input_tokens"] == (
        usage_before["cache_read_input_tokens"] + usage_before["cache_creation_input_tokens"]
    )
    assert usage_after["cache_read_input_tokens"] > 0


def test_a_megabyte_result_reaches_the_model_as_a_preview_and_the_file_holds_it_all(emulator, project, home):
    emulated = emulator(
        [{"tools": [{"name": "Bash", "input": {"command": "seq 1 200000"}}]}, {"text": "Counted."}]
    )
    env = agent_env(emulated, home)
    done = run_agent(["-p", "count", "--output-format", "json", "--dangerously-skip-permissions"], cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    [block] = tool_results(emulated.bodies()[-1]).values()
    preview, tag = result_text(block).rsplit("\n", 1)
    assert tag.startswith("[id:")  # the snip tag, added on the wire only
    assert preview.startswith(PERSISTED_OUTPUT_TAG + "\nOutput too large (1.2 MB). Full output saved to: ")
    assert len(preview) < 2_500 and "\n1\n2\n3\n" in preview and "200000" not in preview
    path = Path(preview.splitlines()[1].split("Full output saved to: ", 1)[1])
    expected = subprocess.run(["seq", "1", "200000"], capture_output=True, text=True).stdout
    assert path.read_text() == expected
    assert path.parent.name == "tool-results" and oct(path.stat().st_mode & 0o777) == "0o600"
    [transcript] = transcript_files(home)
    text = transcript.read_text()
    assert "199999" not in text and len(text) < 60_000
    stored = [r for r in read_records(transcript) if r["type"] == "user" and "toolUseResult" in r]
    assert result_text(stored[0]["message"]["content"][0]) == preview


def test_sigkill_mid_turn_then_resume_loses_at_most_the_inflight_message(emulator, project, home):
    emulated = emulator(
        [
            {"text": "Waiting a moment.", "tools": [{"name": "Bash", "input": {"command": "sleep 4"}}]},
            {"text": "Back after the crash."},
        ]
    )
    env = agent_env(emulated, home)
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_repl", "-p", "wait", "--dangerously-skip-permissions"],
        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    transcript = None
    while time.monotonic() < deadline:
        files = transcript_files(home)
        if files and '"name":"Bash"' in files[0].read_text():
            transcript = files[0]
            break
        time.sleep(0.05)
    assert transcript is not None, "the tool call never reached the transcript"
    lines_before_kill = transcript.read_text().splitlines()
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    process.stdout.close()
    process.stderr.close()

    resumed = run_agent(["--continue", "-p", "are you there?", "--output-format", "json"], cwd=project, env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["result"] == "Back after the crash."
    # Every record written before the kill is still there, first in the file.
    assert transcript.read_text().splitlines()[: len(lines_before_kill)] == lines_before_kill
    # The interrupted call is answered in the request (the emulator would 400 otherwise).
    request = emulated.bodies()[-1]
    tool_use_ids = [b["id"] for m in request["messages"] if m["role"] == "assistant" for b in m["content"]
                    if b["type"] == "tool_use"]
    answered = tool_results(request)
    assert tool_use_ids and set(tool_use_ids) == set(answered)
    assert answered[tool_use_ids[0]]["is_error"] is True
    assert request["messages"][-1]["content"][-1]["text"].startswith("are you there?")


def test_print_mode_denies_bash_without_approval_and_says_so(emulator, project, home):
    emulated = emulator(
        [{"tools": [{"name": "Bash", "input": {"command": "touch should-not-exist"}}]}, {"text": "Understood."}]
    )
    done = run_agent(["-p", "make a file"], cwd=project, env=agent_env(emulated, home))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Understood."
    assert not (project / "should-not-exist").exists()
    [block] = tool_results(emulated.bodies()[-1]).values()
    assert block["is_error"] is True and "denied" in result_text(block)


def test_max_turns_and_errors_give_a_nonzero_exit(emulator, project, home):
    emulated = emulator(
        [{"tools": [{"name": "Glob", "input": {"pattern": "*"}}]}, {"tools": [{"name": "Glob", "input": {"pattern": "*"}}]}]
    )
    done = run_agent(["-p", "loop", "--max-turns", "1", "--output-format", "json"], cwd=project, env=agent_env(emulated, home))
    assert done.returncode == 1
    assert json.loads(done.stdout)["subtype"] == "error_max_turns"
    # An unknown model is refused before anything is sent, with what the endpoint does know.
    bad = run_agent(["-p", "x", "--model", "claude-nonexistent-9"], cwd=project, env=agent_env(emulated, home))
    assert bad.returncode == 2
    assert "unknown model 'claude-nonexistent-9'" in bad.stderr and "claude-sonnet-5-5" in bad.stderr
    assert not [e for e in emulated.server.recordings.messages if e.path == "/v1/messages"][2:]


def test_resuming_a_claude_code_session_file_forks_it(emulator, project, home):
    fixture = Path(__file__).resolve().parents[1] / "transcript" / "fixtures" / "cc_2.1.22_microcompact.jsonl"
    original = fixture.read_bytes()
    emulated = emulator([{"text": "I can see the earlier conversation."}])
    done = run_agent(["--resume", str(fixture), "-p", "what happened before?", "--output-format", "json"],
                     cwd=project, env=agent_env(emulated, home))
    assert done.returncode == 0, done.stderr
    assert fixture.read_bytes() == original
    request = emulated.bodies()[-1]
    assert len(request["messages"]) > 3
    [forked] = transcript_files(home)
    assert forked.stem == json.loads(done.stdout)["session_id"]
