"""Redaction covers the documented key shapes everywhere text is written or sent, and commands
never get the agent's credentials, so cutting, reversing or encoding them gets nothing.

The session runs in process with credentials of every kind in its environment. Its commands try
to get at them; the user pastes keys into a prompt; Read shows a file full of key shapes; the
model (a policy that "remembers" a key) writes one into the session's notes. Then no key, no
reverse, half or base64 of one, is in any file under the home directory or in any request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.config.settings import SettingsError, load_settings
from agent_repl.core.model.events import ToolResultEvent
from agent_repl.core.permissions.credentials import child_environment
from agent_repl.core.tooling.redaction import REDACTED, SECRET_SHAPES, SecretRedactor
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer
from agent_repl.ui.prompt_history import PromptHistory, history_path

from .support import files_under
from .test_credentials import find_leaks, leak_forms

API_KEY = "sk-ant-api03-REDACTION-TEST-KEY-0123456789abcdefghijklmnopqrstuvwxyz"
AUTH_TOKEN = "auth-token-redaction-0123456789abcdef"
NAMED = "named-in-settings-0123456789abcdef"  # listed under credential_env
KEPT = {  # credentials commands still get (aws, gh, git push need them), redacted by value
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzEXAMPLE",
    "GITHUB_TOKEN": "ghp_" + "R" * 36,
    "SHOP_DB_PASSWORD": "correct-horse-battery-staple",
}
# One of each documented shape, none of them known to the agent by value.
SHAPED = {
    "anthropic": "sk-ant-admin01-" + "Q" * 40,
    "aws-access-key-id": "AKIA" + "Z" * 16,
    "aws-secret-access-key": "aws_secret_access_key = " + "x/Y+" * 10,
    "github": "github_pat_" + "g" * 40,
    "bearer": "Authorization: Bearer " + "b" * 40,
    "slack": "xoxb-" + "4" * 30,
    "google-api-key": "AIza" + "G" * 35,
    "stripe": "sk_live_" + "s" * 30,
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTYifQ.c2lnbmF0dXJlc2lnbmF0dXJl",
    "private-key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + "k" * 64 + "\n-----END RSA PRIVATE KEY-----",
    "credential-assignment": "DEPLOY_TOKEN=" + "d" * 24,
}
assert set(SHAPED) == set(SECRET_SHAPES)


def secret_part(sample: str) -> str:
    """The part of a sample that must disappear (labels such as `Bearer ` may stay)."""
    for marker in ("Bearer ", "= ", "TOKEN=", "-----\n"):
        if marker in sample:
            return sample.split(marker, 1)[1].split("\n-----", 1)[0]
    return sample


ATTACKS = [
    "env",
    *(f"echo ${{{n}:0:12}} ${{{n}:12}}; echo ${n} | rev; echo ${n} | base64 -w0"
      for n in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "SHOP_NAMED")),
    "printenv AWS_SECRET_ACCESS_KEY GITHUB_TOKEN SHOP_DB_PASSWORD",
    "env | grep -c -e ANTHROPIC_ -e SHOP_NAMED; true",
]  # fmt: skip


class RemembersAKey:
    """A model that writes a key it "remembers" into the session notes (it never saw one)."""

    def __init__(self, inner: ScriptPolicy) -> None:
        self.inner = inner

    def reply(self, request: Any) -> Any:
        reply = self.inner.reply(request)
        if request_kind(request.body) == "memory":
            text = reply.content[0]["text"].replace("</summary>", f"Key seen: {SHAPED['anthropic']}\n</summary>")
            reply.content[0] = {**reply.content[0], "text": text}
        return reply

    def completed(self, request: Any, reply: Any) -> None:
        self.inner.completed(request, reply)


@pytest.mark.timeout(180)
async def test_no_credential_or_key_shape_reaches_a_file_or_the_model(project, home, monkeypatch, figures):
    (project / "keys.txt").write_text("\n".join(SHAPED.values()) + "\n")
    (home / ".agent_repl").mkdir(parents=True)
    steps = [
        {"tools": [{"name": "Bash", "input": {"command": c}} for c in ATTACKS]},
        {"tools": [{"name": "Read", "input": {"file_path": str(project / "keys.txt")}}]},
        {"text": "Looked."},
        {"text": "Noted."},
    ]
    server = EmulatorServer(
        policy=RemembersAKey(ScriptPolicy({"steps": steps})), summarizer=AgentSummarizer()
    )
    environment = {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_AUTH_TOKEN": AUTH_TOKEN, "SHOP_NAMED": NAMED, **KEPT}
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    (project / ".agent_repl").mkdir()
    (project / ".agent_repl" / "settings.json").write_text(json.dumps({"credential_env": ["SHOP_NAMED"]}))
    with server:
        env = {"AGENT_REPL_HOME": str(home), "ANTHROPIC_BASE_URL": server.base_url, **environment,
               "AGENT_REPL_CONTEXT_WINDOW": "40000"}  # fmt: skip
        settings = load_settings(cwd=project, env=env, overrides={"skip_permissions": True})
        session = await open_session(settings, project)
        session.memory.first_after_tokens = 1_000
        pasted = f"here are my keys: {' '.join(SHAPED.values())} and {API_KEY}"
        history = PromptHistory(history_path(home, project), redactor=session.redactor)
        results: list[ToolResultEvent] = []
        try:
            for prompt in (pasted, "and note it"):
                history.append(prompt)
                events = [e async for e in session.run_turn(prompt)]
                results += [e for e in events if isinstance(e, ToolResultEvent)]
            assert await session.memory.wait_for_extraction(60)
        finally:
            await close_session(session)
        requests = server.recordings.messages

    outputs = [e.message.tool_results()[0].text() for e in results]
    assert len(outputs) == len(ATTACKS) + 1
    # Commands never got the agent's credentials: every cut, reversal and encoding is of nothing.
    for output in outputs[1:4]:
        assert output.split("\n")[:2] == ["", ""], output  # `echo ${X:0:12} ${X:12}` and `| rev` of empty
    assert outputs[-2].startswith("0")  # no ANTHROPIC_ or SHOP_NAMED variable at all
    # Commands still got the others, and what they printed is redacted.
    assert outputs[4].split("\n") == [REDACTED] * 3
    assert f"AWS_SECRET_ACCESS_KEY={REDACTED}" in outputs[0] and f"GITHUB_TOKEN={REDACTED}" in outputs[0]
    assert outputs[-1].count(REDACTED) >= len(SHAPED)

    notes = [p for p in files_under(home) if p.name == "memory.md"]
    assert notes and "Key seen: [REDACTED]" in notes[0].read_text()
    secrets = [API_KEY, AUTH_TOKEN, NAMED, *KEPT.values(), *(secret_part(s) for s in SHAPED.values())]
    files = files_under(home)
    assert {p.suffix for p in files} >= {".jsonl", ".md"} and history.path in files
    for secret in secrets:
        forms = leak_forms(secret) if secret in (API_KEY, AUTH_TOKEN, NAMED) else {"key": secret.encode()}
        for path in files:
            assert not find_leaks(path.read_bytes(), forms), f"{secret[:16]}... is in {path}"
        for exchange in requests:
            assert not find_leaks(exchange.body_bytes, forms), f"{secret[:16]}... reached the model"
    figures.update(commands=len(ATTACKS), secrets=len(secrets), shapes=len(SHAPED), files_checked=len(files),
                   requests=len(requests))  # fmt: skip


@pytest.mark.parametrize("name", sorted(SHAPED))
def test_each_documented_shape_is_redacted_and_its_label_kept(name):
    sample = SHAPED[name]
    redacted = SecretRedactor().text(f"before {sample} after" if name != "credential-assignment" else sample)
    assert secret_part(sample) not in redacted and REDACTED in redacted
    if name == "bearer":
        assert redacted == f"before Authorization: Bearer {REDACTED} after"


@pytest.mark.parametrize(
    "text",
    ["the bearer of bad news", "MAX_TOKENS=8192", "PASSWORD_MIN_LENGTH=8", "TOKENIZERS_PARALLELISM=false",
     "sk-ant-short", "look at AKIA in the docs", "x = config.TOKEN=abcdefghij"],
)  # fmt: skip
def test_ordinary_text_is_left_alone(text):
    assert SecretRedactor().text(text) == text


def test_a_shape_split_across_file_chunks_is_still_redacted(tmp_path, monkeypatch):
    import agent_repl.core.tooling.redaction as redaction

    monkeypatch.setattr(redaction, "_CHUNK_BYTES", 7)
    monkeypatch.setattr(redaction, "_MAX_MATCH_CHARS", 200)
    path = tmp_path / "out.txt"
    path.write_text(("x" * 13 + SHAPED["github"] + "\n" + SHAPED["bearer"] + "\n") * 5)
    assert SecretRedactor().file(path)
    assert path.read_text() == ("x" * 13 + REDACTED + "\n" + f"Authorization: Bearer {REDACTED}\n") * 5
    assert not SecretRedactor().file(path)


def test_child_environments_lose_the_agents_credentials_and_settings_names(tmp_path):
    (tmp_path / ".agent_repl").mkdir()
    (tmp_path / ".agent_repl" / "settings.json").write_text(json.dumps({"credential_env": ["SHOP_NAMED"]}))
    env = {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_AUTH_TOKEN": AUTH_TOKEN, "SHOP_NAMED": NAMED, **KEPT,
           "AGENT_REPL_HOME": str(tmp_path / "home"), "PATH": "/usr/bin"}  # fmt: skip
    settings = load_settings(cwd=tmp_path, env=env)
    child = child_environment(settings.scrubbed_env, env)
    assert set(child) == {*KEPT, "AGENT_REPL_HOME", "PATH"}
    # Every credential is known by value, to redact it.
    assert set(settings.credentials.values()) == {API_KEY, AUTH_TOKEN, NAMED, *KEPT.values()}


def test_credential_env_must_name_variables(tmp_path):
    (tmp_path / ".agent_repl").mkdir()
    (tmp_path / ".agent_repl" / "settings.json").write_text(json.dumps({"credential_env": ["A=B"]}))
    with pytest.raises(SettingsError, match="credential_env.*not an environment variable name"):
        load_settings(cwd=tmp_path, env={"AGENT_REPL_HOME": str(tmp_path / "home")})


def test_the_prompt_history_file_keeps_no_key(tmp_path):
    path = history_path(tmp_path / "home", tmp_path / "project")
    history = PromptHistory(path)
    history.append(f"export ANTHROPIC_API_KEY={SHAPED['anthropic']}")
    assert SHAPED["anthropic"] not in Path(path).read_text()
    assert history.entries[-1].endswith(SHAPED["anthropic"])  # recalled in this run as typed
