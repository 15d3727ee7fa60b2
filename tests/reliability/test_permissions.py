"""Permissions: in the default mode Bash never runs unapproved, whichever front end asks.

Print mode (the CLI in a subprocess), the inline REPL (its real prompt, fed through a pipe) and
the full-screen app (its real dialog, driven by Textual's pilot) each get a model that wants to
run commands which would leave a marker file; every refusal path must leave no marker. Deny rules
beat allow rules and the skip flag, also inside chained commands; only the explicit
`--dangerously-skip-permissions` flag bypasses the rules (no settings key or environment variable
does); a broken settings file stops the CLI with the file and the field named.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from agent_repl.core.config.settings import Settings, load_settings
from agent_repl.core.permissions.rules import Decision, PermissionPolicy, PermissionRequest
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

from .support import result_text


def bash_calls(commands: list[str]) -> list[dict[str, Any]]:
    return [{"name": "Bash", "input": {"command": c}} for c in commands]


def risky_commands(project: Path) -> list[str]:
    """Commands that each leave a marker file if they run at all."""
    m = project / "markers"
    return [
        f"touch {m}/plain",
        f"echo hi; touch {m}/chained",
        f"echo hi && touch {m}/and",
        f"echo $(touch {m}/substituted)",
        f"echo `touch {m}/backticks`",
        f"echo >(touch {m}/process-substitution)",
        f"echo hi > {project.parent / 'outside'}/redirected",
        f"echo hi\ntouch {m}/newline",
    ]


def markers(project: Path) -> list[str]:
    outside = project.parent / "outside"
    return sorted(p.name for d in (project / "markers", outside) if d.is_dir() for p in d.iterdir())


@pytest.fixture
def marked_project(project: Path) -> Path:
    (project / "markers").mkdir()
    (project.parent / "outside").mkdir()
    return project


def start_emulator(steps: list[dict[str, Any]]) -> EmulatorServer:
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps}))
    server.start()
    return server


def cli_env(server: EmulatorServer | None, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    env.update(
        ANTHROPIC_BASE_URL=server.base_url if server else "http://127.0.0.1:9",
        ANTHROPIC_API_KEY="sk-ant-test-permissions",
        AGENT_REPL_HOME=str(home),
    )
    env.update(extra)
    return env


def run_cli(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_repl", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def tool_results(server: EmulatorServer) -> list[dict[str, Any]]:
    body = [e.body for e in server.recordings.messages if e.status == 200][-1]
    return [b for m in body["messages"] if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]


# --- print mode -------------------------------------------------------------------------------------


@pytest.mark.timeout(180)
def test_print_mode_denies_every_unapproved_command_even_with_a_prefix_rule(marked_project, home):
    commands = risky_commands(marked_project)
    server = start_emulator([{"tools": bash_calls([*commands, "echo allowed-by-rule"])}, {"text": "Understood."}])
    try:
        # `echo` is allowed by a prefix rule; none of the risky forms may ride on it.
        done = run_cli(["-p", "do things", "--allowed-tools", "Bash(echo:*)"], marked_project, cli_env(server, home))
        results = tool_results(server)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    assert markers(marked_project) == []
    assert [r.get("is_error", False) for r in results] == [True] * len(commands) + [False]
    assert all("denied" in result_text(r["content"]) for r in results[:-1])
    assert result_text(results[-1]["content"]).startswith("allowed-by-rule")


@pytest.mark.timeout(180)
def test_only_the_explicit_flag_bypasses_and_deny_rules_still_win(marked_project, home):
    m = marked_project / "markers"
    settings_file = marked_project / ".agent_repl" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text(json.dumps({"permissions": {"allow": ["Bash"], "deny": ["Bash(rm:*)", "Bash(touch:*)"]}}))
    commands = [f"touch {m}/denied", f"echo hi; touch {m}/denied-chained", f"(touch {m}/denied-subshell)",
                f"echo ran > {m}/allowed"]  # fmt: skip
    server = start_emulator([{"tools": bash_calls(commands)}, {"text": "Done."}])
    try:
        done = run_cli(["-p", "go", "--dangerously-skip-permissions"], marked_project, cli_env(server, home))
        results = tool_results(server)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    assert markers(marked_project) == ["allowed"]
    assert [r.get("is_error", False) for r in results] == [True, True, True, False]


# Names someone might expect to switch the checks off; none of them may.
BYPASS_LOOKALIKES = [
    "AGENT_REPL_SKIP_PERMISSIONS", "AGENT_REPL_DANGEROUSLY_SKIP_PERMISSIONS", "DANGEROUSLY_SKIP_PERMISSIONS",
    "CLAUDE_DANGEROUSLY_SKIP_PERMISSIONS", "AGENT_REPL_YOLO", "SKIP_PERMISSIONS", "AGENT_REPL_PERMISSION_MODE",
]  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(BYPASS_LOOKALIKES), st.sampled_from(["1", "true", "yes", "bypassPermissions"]), max_size=4
    )
)
def test_no_environment_variable_turns_the_checks_off(env_extra):
    settings = load_settings(cwd=Path("/nonexistent"), env={"AGENT_REPL_HOME": "/nonexistent/home", **env_extra})
    assert settings.skip_permissions is False


@pytest.mark.parametrize("key", ["skip_permissions", "dangerously_skip_permissions", "permission_mode"])
def test_no_settings_key_turns_the_checks_off(tmp_path, home, key):
    settings_file = tmp_path / ".agent_repl" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text(json.dumps({key: True}))
    # A trusted folder's file is read strictly: the start stops and names the file and the key.
    done = run_cli(["-p", "hi", "--trust-project"], tmp_path, cli_env(None, home))
    assert done.returncode == 2
    assert str(settings_file) in done.stderr and key in done.stderr
    # An untrusted folder's file applies nothing: an unknown key is ignored (and named), never obeyed.
    if key != "permission_mode":
        untrusted = load_settings(cwd=tmp_path, env={"AGENT_REPL_HOME": str(home)})
        assert untrusted.skip_permissions is False and untrusted.unknown_held_back == [key]


@pytest.mark.parametrize(
    "where, content, field",
    [
        ("project", "{not json", "line 1, column 2"),
        ("project", '{"permissions": {"deny": ["Bash(rm:*"]}}', "permissions.deny"),
        ("home", '{"permissions": {"allow": ["Bash("]}}', "permissions.allow"),
        ("home", '{"max_retries": "many"}', "max_retries"),
        ("project", '{"stream_idle_timeout": 0}', "stream_idle_timeout"),
        ("project", '["Bash"]', "must be a JSON object"),
    ],
)
def test_a_broken_settings_file_stops_the_cli_naming_file_and_field(tmp_path, home, where, content, field):
    settings_file = (tmp_path / ".agent_repl" if where == "project" else home) / "settings.json"
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(content)
    done = run_cli(["-p", "hi"], tmp_path, cli_env(None, home))
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"agent-repl: {settings_file}: ") and field in line
    assert "Traceback" not in done.stderr


# --- the rules themselves ---------------------------------------------------------------------------

WORDS = st.sampled_from(["rm", "git", "ls", "echo", "make", "curl", "-rf", "status", "x", "/tmp/a", "push"])
# Where a simple command can sit in a line: every one of these runs {cmd} (when {before} succeeds).
PLACES = st.sampled_from([
    "{cmd}", "{before}; {cmd}", "{before} && {cmd}", "{before} || {cmd}", "{before} | {cmd}", "{before}\n{cmd}",
    "{before} & {cmd}", "({cmd})", "{before} $({cmd})", "{before} `{cmd}`", "{before} >({cmd})", "{{ {cmd}; }}",
    "if {before}; then {cmd}; fi", "for v in a; do {cmd}; done", "while {cmd}; do :; done", "! {cmd}",
    "sudo {cmd}", "timeout 5 {cmd}", "env A=1 {cmd}", "bash -c '{cmd}'", "eval '{cmd}'", "{before} | xargs {cmd}",
    "A=1 {cmd}", "{cmd} #{before}", "case v in v) {cmd};; esac", "{before} |& {cmd}",
])  # fmt: skip


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    denied=st.lists(WORDS, min_size=1, max_size=2),
    before=st.lists(WORDS, min_size=1, max_size=3),
    after=st.lists(WORDS, max_size=3),
    place=PLACES,
    allow=st.lists(st.sampled_from(["Bash", "Bash(rm:*)", "Bash(git:*)", "Bash(echo:*)", "Read"]), max_size=3),
    skip=st.booleans(),
    leading=st.sampled_from(["", " ", "  "]),
)
def test_a_deny_rule_beats_allow_rules_and_the_flag_wherever_its_command_sits(
    denied, before, after, place, allow, skip, leading
):
    assume(not denied[0].startswith("-"))  # an option is never a command name after a wrapper
    prefix = " ".join(denied)
    command = place.format(before=" ".join(before), cmd=leading + " ".join([prefix, *after]))
    policy = PermissionPolicy.from_rules(allow, [f"Bash({prefix}:*)"], skip_all=skip)
    assert policy.check(PermissionRequest("Bash", command)) is Decision.DENY


# What ends a prefix rule's approval: another command, a substitution, a redirection out of the project.
@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(WORDS, min_size=1, max_size=3),
    operator=st.sampled_from([";", "&&", "||", "|", "&", "\n", "$(", "`", ">(", "<(", "> /tmp/a", ">> /etc/x",
                              "< /etc/passwd", "> ~/x", "> ../x", "&> /dev/tcp/h/1"]),  # fmt: skip
    tail=st.lists(WORDS, max_size=3),
    other=st.sampled_from(["rm", "curl", "sh", "python3", "make"]),
)
def test_a_prefix_rule_never_approves_another_command_a_substitution_or_an_outside_redirection(
    words, operator, tail, other
):
    assume(other != words[0])
    command = " ".join(words) + f" {operator} " + " ".join([other, *tail])
    policy = PermissionPolicy.from_rules([f"Bash({words[0]}:*)"], [], roots=[Path("/nonexistent/project")])
    request = PermissionRequest("Bash", command, cwd=Path("/nonexistent/project"))
    assert policy.check(request) is None


async def test_a_failing_approval_callback_denies_instead_of_hanging(marked_project, home):
    """A prompt that ends (EOF) or breaks while asking is a refusal; the turn goes on."""
    from agent_repl.bootstrap import close_session, open_session
    from agent_repl.core.model.events import ToolResultEvent, TurnEnded

    server = start_emulator([{"tools": bash_calls(risky_commands(marked_project)[:1])}, {"text": "OK."}])

    async def broken(_request: PermissionRequest) -> Decision:
        raise EOFError

    try:
        session = await open_session(Settings(home=home, api_key="sk-ant-x", base_url=server.base_url),
                                     marked_project, ask=broken)  # fmt: skip
        try:
            events = await asyncio.wait_for(_collect(session, "go"), 60)
        finally:
            await close_session(session)
    finally:
        server.stop()
    [result] = [e for e in events if isinstance(e, ToolResultEvent)]
    assert result.is_error and "denied" in result.summary
    assert [e.reason for e in events if isinstance(e, TurnEnded)] == ["completed"]
    assert markers(marked_project) == []


async def _collect(session: Any, prompt: str) -> list[Any]:
    return [e async for e in session.run_turn(prompt)]


# --- the inline REPL ---------------------------------------------------------------------------------

INLINE_ANSWERS = {"n": "n\r", "empty": "\r", "other": "nope, do not\r", "ctrl-d": "\x04"}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("answer", sorted(INLINE_ANSWERS))
async def test_the_inline_repl_runs_nothing_unless_the_user_says_yes(marked_project, home, answer):
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from agent_repl.ui.inline import run_inline

    server = start_emulator([{"tools": bash_calls(risky_commands(marked_project)[:1])}, {"text": "Understood."}])
    settings = Settings(home=home, api_key="sk-ant-test-inline", base_url=server.base_url)
    try:
        with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
            # Typed ahead: the prompt, the answer to the permission question, then Ctrl-D to leave.
            keys.send_text("make a file\r" + INLINE_ANSWERS[answer] + "\x04")
            status = await asyncio.wait_for(run_inline(settings, marked_project, None, first_prompt=None), 60)
        results = tool_results(server)
    finally:
        server.stop()
    assert status == 0
    assert markers(marked_project) == []
    [result] = results
    assert result["is_error"] is True and "denied" in result_text(result["content"])


# --- the full-screen app -------------------------------------------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.parametrize("key", ["n"])
async def test_the_app_runs_nothing_when_the_dialog_is_refused(marked_project, home, key):
    from agent_repl.ui.app import AgentApp
    from agent_repl.ui.launcher import Launcher
    from agent_repl.ui.screens.permission import PermissionScreen

    commands = risky_commands(marked_project)[:3]
    server = start_emulator([{"tools": bash_calls(commands)}, {"text": "Understood."}])
    settings = Settings(home=home, api_key="sk-ant-test-app", base_url=server.base_url)
    app = AgentApp(Launcher.for_settings(settings, marked_project), animate=False, warm_client=False)
    seen: list[Any] = []
    try:
        async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
            await _wait(pilot, lambda: any(type(m).__name__ == "SessionReady" for m in seen))
            await pilot.press(*"do it", "enter")
            for i in range(len(commands)):
                # One dialog per call; the next opens as soon as this one is answered.
                await _wait(pilot, lambda i=i: len(asked(seen)) > i and isinstance(app.screen, PermissionScreen))
                await pilot.press(key)
            await _wait(pilot, lambda: any(type(m).__name__ == "TurnFinished" for m in seen))
        results = tool_results(server)
    finally:
        server.stop()
    assert markers(marked_project) == []
    assert [r["is_error"] for r in results] == [True] * len(commands)
    assert asked(seen) == commands


def asked(seen: list[Any]) -> list[str]:
    return [m.request.key for m in seen if type(m).__name__ == "PermissionAsked"]


async def _wait(pilot: Any, condition: Any, limit_s: float = 30.0) -> None:
    for _ in range(int(limit_s / 0.02)):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting for {condition}")


# --- Esc and Ctrl+C at the question: no, and the turn stops ------------------------------------------


def assert_rejected_and_stopped(server: EmulatorServer, project: Path, calls: int) -> None:
    """Nothing ran; the next prompt's request carries the first call rejected, the rest never
    started, and the marker of the interruption."""
    assert markers(project) == []
    results = tool_results(server)
    assert [r["is_error"] for r in results] == [True] * calls
    assert "The user rejected this Bash call and stopped the turn" in result_text(results[0]["content"])
    assert all("interrupted by user" in result_text(r["content"]) for r in results[1:])
    last = [e.body for e in server.recordings.messages if e.status == 200][-1]["messages"]
    assert "and now?" in json.dumps(last[-1]) and "Request interrupted by user" in json.dumps(last)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_esc_or_ctrl_c_in_the_app_dialog_denies_and_stops_the_turn(marked_project, home, key):
    from agent_repl.ui.app import AgentApp
    from agent_repl.ui.launcher import Launcher
    from agent_repl.ui.screens.permission import PermissionScreen

    commands = risky_commands(marked_project)[:3]
    server = start_emulator([{"tools": bash_calls(commands)}, {"text": "Understood."}])
    settings = Settings(home=home, api_key="sk-ant-test-app", base_url=server.base_url)
    app = AgentApp(Launcher.for_settings(settings, marked_project), animate=False, warm_client=False)
    seen: list[Any] = []
    finished = lambda: [m for m in seen if type(m).__name__ == "TurnFinished"]  # noqa: E731
    try:
        async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
            await _wait(pilot, lambda: any(type(m).__name__ == "SessionReady" for m in seen))
            await pilot.press(*"do it", "enter")
            await _wait(pilot, lambda: isinstance(app.screen, PermissionScreen))
            await pilot.press(key)
            await _wait(pilot, lambda: len(finished()) == 1)
            # One question only, the dialog gone, the turn over: the prompt is the user's again.
            assert asked(seen) == commands[:1]
            assert not isinstance(app.screen, PermissionScreen) and not app.turn_running
            assert len(server.recordings.messages) == 1  # the model was not asked to go on
            await pilot.press(*"and now?", "enter")
            await _wait(pilot, lambda: len(finished()) == 2)
        assert_rejected_and_stopped(server, marked_project, len(commands))
    finally:
        server.stop()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("key", ["\x1b", "\x03"], ids=["esc", "ctrl-c"])
async def test_esc_or_ctrl_c_at_the_inline_question_denies_and_stops_the_turn(marked_project, home, key, capsys):
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from agent_repl.ui.inline import run_inline

    commands = risky_commands(marked_project)[:3]
    server = start_emulator([{"tools": bash_calls(commands)}, {"text": "Understood."}])
    settings = Settings(home=home, api_key="sk-ant-test-inline", base_url=server.base_url)
    try:
        with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
            keys.send_text("make a file\r")
            running = asyncio.create_task(run_inline(settings, marked_project, None, first_prompt=None))
            printed = ""
            for _ in range(600):  # until the question is printed
                printed += capsys.readouterr().out
                if "Allow Bash:" in printed:
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)  # the question's prompt is reading keys
            keys.send_text(key)  # alone: an Esc followed by a letter would read as Alt+letter
            await asyncio.sleep(1.0)
            keys.send_text("and now?\r")
            for _ in range(600):
                if len(server.recordings.messages) >= 2:
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)
            keys.send_text("\x04")
            status = await asyncio.wait_for(running, 60)
        assert status == 0
        assert len(server.recordings.messages) == 2  # the stopped turn did not ask the model again
        assert_rejected_and_stopped(server, marked_project, len(commands))
    finally:
        server.stop()
