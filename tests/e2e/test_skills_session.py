"""Skills through the real loop against the emulator: the public fixture's project skill and a
user's skill are offered in the Skill tool's description, the model loads one by name, reads a
file beside a user skill without being asked, and a loaded skill comes back after a compaction."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.config.settings import load_settings
from agent_repl.core.loop.compact import compact_now
from agent_repl.core.permissions.rules import Decision
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer

from .compaction_support import run

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code_project"


def _results(body: dict) -> list[dict]:
    return [
        block
        for message in body["messages"]
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "tool_result"
    ]


def _text(block: dict) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


async def test_skills_are_offered_loaded_read_beside_and_reinjected(tmp_path: Path, monkeypatch):
    project = tmp_path / "project"
    shutil.copytree(FIXTURE, project)
    claude = tmp_path / "user-claude"
    user_skill = claude / "skills" / "release-notes"
    user_skill.mkdir(parents=True)
    (user_skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes. Use when asked for a changelog.\n---\n"
        "Follow the template in template.md beside this file.\n"
    )
    (user_skill / "template.md").write_text("## Added\n## Fixed\n")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    steps = [
        {"tools": [{"name": "Skill", "input": {"skill": "local-smoke-test"}}]},
        {"tools": [{"name": "Skill", "input": {"skill": "release-notes"}}]},
        {"tools": [{"name": "Read", "input": {"file_path": str(user_skill / "template.md")}}]},
        {"tools": [{"name": "Skill", "input": {"skill": "no-such-skill"}}]},
        {"text": "Loaded both."},
        {"text": "Still following the smoke checklist."},
    ]
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps}))  # it answers the summary request itself
    server.start()
    asked: list[str] = []

    async def ask(request):  # type: ignore[no-untyped-def]
        asked.append(f"{request.tool_name} {request.key}")
        return Decision.DENY

    env = {"AGENT_REPL_HOME": str(tmp_path / "home"), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "k"}
    settings = load_settings(cwd=project, env=env, trusted=True)
    session = await open_session(settings, project, ask=ask)
    try:
        await run(session, "plan a smoke test and release notes")
        assert await compact_now(session, "manual").run_to_end() is True
        await run(session, "carry on")
    finally:
        await close_session(session)
        server.stop()

    bodies = [e.body for e in server.recordings.messages if e.status == 200 and not request_kind(e.body)]
    [skill_tool] = [t for t in bodies[0]["tools"] if t["name"] == "Skill"]
    assert skill_tool["input_schema"]["required"] == ["skill"]
    description = skill_tool["description"]
    assert (
        "- local-smoke-test: Local verification checklist for 1Code desktop startup, repo selection, providers, "
        "and basic agent use. (project)" in description
    )
    assert "- release-notes: Write release notes. Use when asked for a changelog. (user)" in description
    # The bodies are not offered up front, only loaded.
    assert "Keep these tracks separate" not in json.dumps(bodies[0])

    results = [_text(b) for b in _results(bodies[4])]
    assert results[0].startswith(f"Base directory for this skill: {(project / '.claude/skills/local-smoke-test').resolve()}")
    assert "Keep these tracks separate:\n- Startup and loginless local mode." in results[0]
    assert "Follow the template in template.md" in results[1]
    assert "## Added" in results[2], "a file beside a user skill is read without asking"
    assert asked == []
    assert results[3].startswith("Unknown skill: no-such-skill.") and "local-smoke-test, release-notes" in results[3]

    last = json.dumps(bodies[-1]["messages"], ensure_ascii=False)
    assert "The skill local-smoke-test was loaded before the conversation was compacted" in last
    assert "The skill release-notes was loaded before the conversation was compacted" in last
    assert "List failures by track instead of summarizing them" in last


async def test_an_untrusted_folder_offers_no_project_skill(tmp_path: Path, monkeypatch):
    project = tmp_path / "project"
    shutil.copytree(FIXTURE, project)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "none"))
    server = EmulatorServer(policy=ScriptPolicy({"steps": [{"text": "hi"}]}))
    server.start()
    env = {"AGENT_REPL_HOME": str(tmp_path / "home"), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "k"}
    settings = load_settings(cwd=project, env=env, trusted=False)
    session = await open_session(settings, project)
    try:
        await run(session, "hello")
    finally:
        await close_session(session)
        server.stop()
    body = server.recordings.messages[-1].body
    assert "Skill" not in [t["name"] for t in body["tools"]]
