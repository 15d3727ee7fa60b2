"""Credentials never sit where a command can read them: not in its environment, not in the agent's.

The main test starts the real `agent-repl -p` with a fake key in its environment and lets a scripted
model run (approved by an allow rule) what an attacker would: the agent's `/proc/$PPID/environ`
with `cat` and `tr`, the same for every ancestor it can find, `ps eww`, and the key itself cut in
halves, reversed and base64-encoded. Then the key, its reverse, its halves and its base64 (at
every alignment) are looked for in what the model received, in the transcript and in every file
under the home directory; and the request to the API must still carry the key.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

from .support import files_under

REPO = Path(__file__).resolve().parents[2]
AGENT = Path(sys.executable).with_name("agent-repl")

# Every way we know to get at the environment of the agent or of the command itself.
ATTACKS = [
    "cat /proc/$PPID/environ",
    "tr '\\0' '\\n' < /proc/$PPID/environ",
    # Walk up from this shell to pid 1, dumping each ancestor's environment three ways.
    "pid=$$; while [ \"$pid\" -gt 1 ]; do echo \"== $pid\"; tr '\\0' '\\n' < /proc/$pid/environ; "
    "rev < /proc/$pid/environ; base64 -w0 < /proc/$pid/environ; echo; "
    "pid=$(awk '{print $4}' /proc/$pid/stat); done",
    "ps eww",
    "env",
    "echo ${ANTHROPIC_API_KEY:0:20} ${ANTHROPIC_API_KEY:20}",
    "echo $ANTHROPIC_API_KEY | rev",
    "echo $ANTHROPIC_API_KEY | base64 -w0",
    "printenv ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN SHOP_SECRET; echo exit=$?",
    "python3 -c \"import os; print(open('/proc/%d/environ' % os.getppid(), 'rb').read())\"",
]


def leak_forms(secret: str) -> dict[str, bytes]:
    """The key and what a command can turn it into: reversed, halves, base64 at every byte alignment."""
    raw = secret.encode()
    half = len(raw) // 2
    forms = {
        "key": raw,
        "reversed": raw[::-1],
        "first half": raw[:half],
        "second half": raw[half:],
        "first 20": raw[:20],
        "after 20": raw[20:],
        "reversed second half": raw[half:][::-1],
    }
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw)
        # The characters that depend on the key's bytes alone.
        forms[f"base64 at offset {offset}"] = encoded[4 if offset else 0 : -4]
    return forms


def find_leaks(data: bytes, forms: dict[str, bytes]) -> list[str]:
    return [name for name, form in forms.items() if form in data]


class KeyWitness:
    """ASGI middleware in front of the emulator: notes the key of every request (x-api-key or bearer)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.keys: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            bearer = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
            self.keys.append(headers.get(b"x-api-key", b"").decode() or bearer)
        await self.app(scope, receive, send)


@pytest.mark.timeout(240)
def test_no_command_reaches_the_key_through_any_process_environment(project, tmp_path, figures):
    key = "sk-ant-api03-" + secrets.token_urlsafe(60)
    token = "auth-" + secrets.token_urlsafe(30)
    shop_secret = "shop-" + secrets.token_urlsafe(30)  # a credential named in the settings
    home = tmp_path / "home"
    (home / ".agent_repl").mkdir(parents=True)
    (home / ".agent_repl" / "settings.json").write_text(json.dumps({"credential_env": ["SHOP_SECRET"]}))
    tools = [{"name": "Bash", "input": {"command": command}} for command in ATTACKS]
    server = EmulatorServer(policy=ScriptPolicy({"steps": [{"tools": tools}, {"text": "Nothing to see."}]}))
    witness = KeyWitness(server.app)
    server.app = witness
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    env.update(
        HOME=str(home),
        AGENT_REPL_HOME=str(home / ".agent_repl"),
        ANTHROPIC_BASE_URL="",
        ANTHROPIC_API_KEY=key,
        ANTHROPIC_AUTH_TOKEN=token,
        SHOP_SECRET=shop_secret,
    )
    with server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        done = subprocess.run(
            [str(AGENT), "-p", "look around", "--allowed-tools", "Bash", "--output-format", "json"],
            cwd=project, env=env, capture_output=True, timeout=180, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        requests = server.recordings.messages

    assert done.returncode == 0, (done.stdout + done.stderr).decode()
    # Every command ran and answered; the model's second request holds all of their results.
    final = requests[-1].body
    results = [b for m in final["messages"] if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]
    assert len(results) == len(ATTACKS)
    outputs = [json.dumps(r["content"]) for r in results]
    assert "exit=1" in outputs[ATTACKS.index("printenv ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN SHOP_SECRET; echo exit=$?")]
    assert "AGENT_REPL_HOME=" in outputs[0] and "AGENT_REPL_HOME=" in outputs[1]  # the agent's environ was read

    for name, value in (("the API key", key), ("the auth token", token), ("the settings' credential", shop_secret)):
        forms = leak_forms(value)
        for exchange in requests:
            assert not find_leaks(exchange.body_bytes, forms), f"{name} reached the model"
        assert not find_leaks(done.stdout + done.stderr, forms), f"{name} was printed"
        for path in files_under(home):
            assert not find_leaks(path.read_bytes(), forms), f"{name} is in {path}"
    assert any(p.suffix == ".jsonl" for p in files_under(home))
    # The key still went to the API, on every request.
    assert witness.keys and set(witness.keys) == {key}
    figures.update(commands=len(ATTACKS), forms_per_secret=len(leak_forms(key)), requests=len(requests),
                   files_checked=len(files_under(home)), requests_with_the_key=len(witness.keys))  # fmt: skip


HANDOFF_PROBE = """
import json, os, sys
from pathlib import Path
from agent_repl.core.permissions.credentials import HANDOFF_FD_VAR, take_credentials
fd = os.environ.get(HANDOFF_FD_VAR)
credentials = take_credentials(Path.cwd())
try:
    os.fstat(int(fd))
    fd_open = True
except (TypeError, OSError):
    fd_open = False
print(json.dumps({
    "pid": os.getpid(),
    "credentials": credentials,
    "environ": open("/proc/self/environ", "rb").read().decode(),
    "os_environ": dict(os.environ),
    "handed_over_fd": fd,
    "fd_still_open": fd_open,
}))
"""


def test_the_handoff_re_executes_without_the_credentials_and_closes_its_pipe(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(HANDOFF_PROBE)
    (tmp_path / ".agent_repl").mkdir()
    (tmp_path / ".agent_repl" / "settings.json").write_text(json.dumps({"credential_env": ["DEPLOY_KEY"]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    env.update(ANTHROPIC_API_KEY="sk-ant-api03-handoff-probe-key", DEPLOY_KEY="deploy-value-123",
               AGENT_REPL_HOME=str(tmp_path / "home"), PYTHONPATH=str(REPO))  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, str(script)], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err.decode()
    report = json.loads(out)
    assert report["pid"] == process.pid  # the same process, re-executed in place
    assert report["credentials"] == {"ANTHROPIC_API_KEY": "sk-ant-api03-handoff-probe-key",
                                     "DEPLOY_KEY": "deploy-value-123"}  # fmt: skip
    for value in report["credentials"].values():
        assert value not in report["environ"] and value not in json.dumps(report["os_environ"])
    assert report["handed_over_fd"] is not None and not report["fd_still_open"]
    assert "AGENT_REPL_CREDENTIALS_FD" not in report["os_environ"]


def test_without_credentials_in_the_environment_nothing_is_re_executed(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(HANDOFF_PROBE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    env.update(AGENT_REPL_HOME=str(tmp_path / "home"), PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, timeout=60)
    report = json.loads(done.stdout)
    assert report["credentials"] == {} and report["handed_over_fd"] is None


@pytest.mark.timeout(120)
def test_a_key_from_the_key_helper_lives_in_memory_only(project, tmp_path):
    key = "sk-ant-api03-" + secrets.token_urlsafe(40)
    home = tmp_path / "home"
    (home / ".agent_repl").mkdir(parents=True)
    # The helper fails if it can see the agent's other credential: helpers get what commands get.
    vault = tmp_path / "vault"  # outside the home directory: the key is only ever printed by the helper
    vault.write_text(key)
    helper = f"printenv ANTHROPIC_AUTH_TOKEN >/dev/null && exit 9; cat {vault}"
    (home / ".agent_repl" / "settings.json").write_text(json.dumps({"api_key_helper": helper}))
    tools = [{"name": "Bash", "input": {"command": c}} for c in ("env", "tr '\\0' '\\n' < /proc/$PPID/environ")]
    server = EmulatorServer(policy=ScriptPolicy({"steps": [{"tools": tools}, {"text": "Done."}]}))
    witness = KeyWitness(server.app)
    server.app = witness
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    env.update(HOME=str(home), AGENT_REPL_HOME=str(home / ".agent_repl"), ANTHROPIC_AUTH_TOKEN="tok-" + "t" * 20)
    with server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        done = subprocess.run(
            [str(AGENT), "-p", "look", "--allowed-tools", "Bash"],
            cwd=project, env=env, capture_output=True, timeout=100, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        requests = server.recordings.messages
    assert done.returncode == 0, (done.stdout + done.stderr).decode()
    forms = leak_forms(key)
    for exchange in requests:
        assert not find_leaks(exchange.body_bytes, forms)
    for path in files_under(home):
        assert not find_leaks(path.read_bytes(), forms), path
    assert set(witness.keys) == {key}


def test_a_failing_key_helper_or_a_key_in_a_project_file_stops_the_start_with_one_line(project, tmp_path):
    home = tmp_path / "home"
    (home / ".agent_repl").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    env.update(HOME=str(home), AGENT_REPL_HOME=str(home / ".agent_repl"), ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    user_file, project_file = home / ".agent_repl" / "settings.json", project / ".agent_repl" / "settings.json"
    project_file.parent.mkdir()
    cases = [
        (user_file, {"api_key_helper": "echo broken >&2; exit 3"}, "api_key_helper 'echo broken >&2; exit 3' failed (exit 3): broken"),
        (user_file, {"api_key_helper": "true"}, "it printed no key"),
        (project_file, {"api_key_helper": "echo sk-ant-x"}, "may only be set in your own settings file"),
        (project_file, {"api_key": "sk-ant-api03-in-a-repository"}, "may only be set in your own settings file"),
    ]  # fmt: skip
    for path, settings, message in cases:
        path.write_text(json.dumps(settings))
        # A project's file is read strictly once trusted (untrusted, its keys are ignored, never run).
        trust = ["--trust-project"] if path == project_file else []
        done = subprocess.run([str(AGENT), "-p", "hi", *trust], cwd=project, env=env, capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)  # fmt: skip
        path.unlink()
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
