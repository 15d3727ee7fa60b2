"""The hook runner and what each answer means: real commands in subprocesses, no model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agent_repl.core.config.hooks import ConfiguredHook, HookMatcher, configured_hooks, matches
from agent_repl.core.config.settings import SettingsError, load_settings
from agent_repl.core.hooks.io import HookRun, interpret
from agent_repl.core.hooks.payloads import HookOutput, parse_output
from agent_repl.core.hooks.runner import HOOK_OUTPUT_LIMIT, HookRunner
from agent_repl.core.tooling.redaction import SecretRedactor

PY = sys.executable
SECRET = "sk-ant-api03-" + "s3cr3t" * 8


def hook(command: str, event: str = "PreToolUse", matcher: str = "", timeout: float = 30) -> ConfiguredHook:
    return ConfiguredHook(event, matcher, command, timeout, "user")


def runner(tmp_path: Path, *hooks: ConfiguredHook, redactor: SecretRedactor | None = None) -> HookRunner:
    return HookRunner(
        list(hooks),
        cwd=tmp_path,
        session_id="s-1",
        transcript_path=lambda: str(tmp_path / "s-1.jsonl"),
        permission_mode=lambda: "default",
        redactor=redactor or SecretRedactor(),
        output_dir=tmp_path / "tool-results",
    )


def py(tmp_path: Path, name: str, body: str) -> str:
    script = tmp_path / f"{name}.py"
    script.write_text("import json, os, sys, time, pathlib\n" + body)
    return f"{PY} {script}"


PRE_FIELDS = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"}


def run_of(event: str, exit_code: int, stdout: str = "", stderr: str = "") -> HookRun:
    output, problem = parse_output(stdout) if exit_code == 0 else (None, None)
    return HookRun(hook("x", event), exit_code, stdout, stderr, output=output, error=problem)


@pytest.mark.parametrize(
    ("event", "blocked", "to_model"),
    [
        ("PreToolUse", True, False),  # denied: the reason is the tool's result
        ("PostToolUse", False, True),
        ("UserPromptSubmit", True, False),
        ("Stop", True, True),
        ("SubagentStop", True, True),
        ("PreCompact", False, False),
        ("SessionStart", False, False),
        ("SessionEnd", False, False),
        ("Notification", False, False),
    ],
)
def test_exit_code_two_blocks_and_routes_stderr_as_each_event_defines(event, blocked, to_model):
    outcome = interpret(event, [run_of(event, 2, stderr="not like this")])
    assert outcome.blocked is blocked
    assert (outcome.feedback == ["not like this"]) is to_model
    if event == "PreToolUse":
        assert outcome.permission == "deny" and outcome.permission_reason == "not like this"
    elif not to_model:
        assert outcome.notices == [f"{event} hook: not like this"]
    assert not outcome.failures


def test_other_exit_codes_are_failures_the_user_sees_and_nothing_is_blocked():
    outcome = interpret("PreToolUse", [run_of("PreToolUse", 1, stderr="jq: not found")])
    assert not outcome.blocked and outcome.permission is None
    assert outcome.failures == ["PreToolUse hook failed with exit code 1: jq: not found"]


def test_plain_stdout_is_context_only_where_claude_code_makes_it_context():
    for event in ("UserPromptSubmit", "SessionStart", "PreCompact"):
        assert interpret(event, [run_of(event, 0, "note this")]).context == ["note this"]
    for event in ("PreToolUse", "PostToolUse", "Stop", "Notification", "SessionEnd"):
        assert interpret(event, [run_of(event, 0, "note this")]).context == []


def test_documented_json_answers_are_read_and_the_strongest_permission_wins():
    allow = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}})
    ask = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                                             "permissionDecisionReason": "touches prod"}})
    outcome = interpret("PreToolUse", [run_of("PreToolUse", 0, allow), run_of("PreToolUse", 0, ask)])
    assert outcome.permission == "ask" and outcome.permission_reason == "touches prod" and not outcome.blocked
    legacy = interpret("PreToolUse", [run_of("PreToolUse", 0, json.dumps({"decision": "block", "reason": "no"}))])
    assert legacy.permission == "deny" and legacy.permission_reason == "no"
    stop = json.dumps({"continue": False, "stopReason": "quota reached", "systemMessage": "heads up",
                       "suppressOutput": True, "decision": "block", "reason": "ignored: continue wins"})
    stopped = interpret("Stop", [run_of("Stop", 0, stop)])
    assert stopped.stop_turn and stopped.stop_reason == "quota reached" and stopped.notices == ["heads up"]
    context = json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "lint ok"}})
    assert interpret("PostToolUse", [run_of("PostToolUse", 0, context)]).context == ["lint ok"]
    refused = interpret("UserPromptSubmit", [run_of("UserPromptSubmit", 0, '{"decision": "block", "reason": "no secrets"}')])
    assert refused.blocked and refused.notices == ["no secrets"] and refused.feedback == []


def test_an_answer_with_undocumented_fields_is_a_failure_not_a_silent_pass():
    run = run_of("PreToolUse", 0, '{"permissionDecision": "deny"}')  # belongs in hookSpecificOutput
    outcome = interpret("PreToolUse", [run])
    assert outcome.permission is None and not outcome.blocked
    assert "its JSON answer is not valid" in outcome.failures[0] and "permissionDecision" in outcome.failures[0]
    assert set(HookOutput.model_fields) == {
        "continue_", "stopReason", "suppressOutput", "systemMessage", "decision", "reason", "hookSpecificOutput"
    }
    assert HookOutput.model_validate({"continue": False}).continue_ is False


def test_updated_input_is_never_applied_and_the_user_is_told():
    answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                     "updatedInput": {"command": "rm -rf /"}}}
    outcome = interpret("PreToolUse", [run_of("PreToolUse", 0, json.dumps(answer))])
    assert outcome.permission == "allow"
    assert "never rewrites a tool call" in outcome.failures[0]


def test_matchers():
    assert matches("", "Bash") and matches("*", "Edit")
    assert matches("Bash", "Bash") and not matches("Bash", "BashOutput")
    assert matches("Edit|Write", "Write") and not matches("Edit|Write", "Read")
    assert matches("mcp__.*", "mcp__github__search") and not matches("mcp__.*", "Bash")
    assert matches("Notebook.*", "NotebookEdit")
    with pytest.raises(ValueError):
        HookMatcher(matcher="(", hooks=[])


async def test_the_input_on_stdin_has_the_documented_fields(tmp_path):
    log = tmp_path / "got.json"
    command = py(tmp_path, "log", f"pathlib.Path({str(log)!r}).write_text(sys.stdin.read())")
    hooks = runner(tmp_path, hook(command))
    outcome = await hooks.run("PreToolUse", PRE_FIELDS, match="Bash")
    assert outcome.runs[0].exit_code == 0 and not outcome.failures
    data = json.loads(log.read_text())
    assert data == {
        "session_id": "s-1",
        "transcript_path": str(tmp_path / "s-1.jsonl"),
        "cwd": str(tmp_path),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        **PRE_FIELDS,
    }
    with pytest.raises(ValueError):
        hooks.payload("PreToolUse", {**PRE_FIELDS, "tool_response": {}})  # not one of PreToolUse's fields


async def test_hooks_of_one_event_run_at_the_same_time(tmp_path):
    # Each waits for the other's mark: run one after the other, the first would time out.
    wait = "pathlib.Path('{me}').touch()\nfor _ in range(400):\n    if pathlib.Path('{other}').exists(): sys.exit(0)\n    time.sleep(0.05)\nsys.exit(1)"
    a = py(tmp_path, "a", wait.format(me=tmp_path / "a.mark", other=tmp_path / "b.mark"))
    b = py(tmp_path, "b", wait.format(me=tmp_path / "b.mark", other=tmp_path / "a.mark"))
    outcome = await runner(tmp_path, hook(a), hook(b)).run("PreToolUse", PRE_FIELDS, match="Bash")
    assert [r.exit_code for r in outcome.runs] == [0, 0]


async def test_a_hook_over_its_timeout_is_stopped_and_named_in_one_line(tmp_path):
    slow = py(tmp_path, "slow", "time.sleep(30)")
    hooks = runner(tmp_path, hook(slow, timeout=0.5))
    outcome = await hooks.run("PreToolUse", PRE_FIELDS, match="Bash")
    assert outcome.failures == [f"PreToolUse hook failed: timed out after 0.5 s ({slow})"]
    assert not outcome.blocked
    assert hooks.last_runs[hooks.hooks[0]].summary() == "timed out after 0.5 s"


async def test_hooks_get_no_credentials_and_what_they_print_is_redacted_and_limited(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-" + "x" * 30)
    answer = (
        "ctx = 'key=' + os.environ.get('ANTHROPIC_API_KEY', '-') + ' token=' + os.environ.get('MY_SERVICE_TOKEN', '-')"
        f" + ' printed={SECRET}' + ' project=' + os.environ['CLAUDE_PROJECT_DIR']\n"
        "print(ctx)"
    )
    command = py(tmp_path, "env", answer)
    big = py(tmp_path, "big", f"print('y' * {HOOK_OUTPUT_LIMIT * 2})")
    hooks = runner(tmp_path, hook(command, "SessionStart"), hook(big, "SessionStart"), redactor=SecretRedactor.of(SECRET))
    hooks.scrubbed_env = frozenset({"MY_SERVICE_TOKEN"})
    outcome = await hooks.run("SessionStart", {"source": "startup"}, match="startup")
    small, large = outcome.context
    # Neither the agent's key nor a scrubbed variable reached the hook; a secret it printed is redacted.
    assert small == f"key=- token=- printed=[REDACTED] project={tmp_path}"
    assert len(large) < HOOK_OUTPUT_LIMIT and "<persisted-output>" in large
    saved = list((tmp_path / "tool-results").iterdir())
    assert len(saved) == 1 and saved[0].read_text().strip() == "y" * (HOOK_OUTPUT_LIMIT * 2)


async def test_a_missing_command_is_a_failure_with_its_exit_code(tmp_path):
    outcome = await runner(tmp_path, hook("/no/such/hook.sh")).run("PreToolUse", PRE_FIELDS, match="Bash")
    assert outcome.failures and "exit code 127" in outcome.failures[0] and not outcome.blocked


def test_project_hooks_need_trust_and_identical_commands_run_once(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".agent_repl").mkdir(parents=True)
    home.mkdir()
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh", "statusMessage": "checking"}]}
    (home / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    (project / ".agent_repl" / "settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [entry, {"hooks": [{"type": "command", "command": "repo.sh"}]}]}})
    )
    env = {"AGENT_REPL_HOME": str(home)}
    untrusted = load_settings(cwd=project, env=env, trusted=False)
    assert [h.command for h in configured_hooks(untrusted.hooks, untrusted.project_hooks, project_trusted=False)] == [
        "check.sh"
    ]
    trusted = load_settings(cwd=project, env=env, trusted=True)
    found = configured_hooks(trusted.hooks, trusted.project_hooks, project_trusted=True)
    assert [(h.command, h.source, h.timeout) for h in found] == [("check.sh", "user", 60.0), ("repo.sh", "project", 60.0)]


def test_a_bad_hooks_setting_names_the_file(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"hooks": {"BeforeTool": []}}))
    with pytest.raises(SettingsError, match="settings.json: hooks.BeforeTool"):
        load_settings(cwd=tmp_path, env={"AGENT_REPL_HOME": str(home)})
    (home / "settings.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "prompt", "command": "x"}]}]}}))
    with pytest.raises(SettingsError, match="type"):
        load_settings(cwd=tmp_path, env={"AGENT_REPL_HOME": str(home)})
