"""A project written for Claude Code, in a real terminal: the public fixture's `.claude/commands/`
and `.claude/skills/` wait for the folder's trust, then its command runs as a prompt and the model
loads its skill; a user's command runs its shell line before the prompt is sent."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .tmux import TmuxBed, unwrapped

READY = "/help lists commands"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code_project"


def _project(tmux_bed: TmuxBed) -> Path:
    project = tmux_bed.project()
    shutil.copytree(FIXTURE / ".claude", project / ".claude")
    return project


def _user_home(tmux_bed: TmuxBed, project: Path) -> Path:
    claude = project.parent / f"claude-{project.name}"
    command = claude / "commands" / "tools" / "branch-note.md"
    command.parent.mkdir(parents=True)
    command.write_text(
        "---\ndescription: Note the word\nallowed-tools: Bash(echo:*)\n---\nThe word is !`echo WORD-$1-ECHOED`.\n"
    )
    return claude


def test_the_fixture_commands_and_skill_work_in_the_app_once_trusted(tmux_bed: TmuxBed):
    project = _project(tmux_bed)
    claude = _user_home(tmux_bed, project)
    tmux_bed.script([
        {"tools": [{"name": "Skill", "input": {"skill": "local-smoke-test"}}]},
        {"text": "SMOKE-PLAN: tracks kept separate."},
        {"text": "NOTED-THE-WORD"},
    ])  # fmt: skip
    term = tmux_bed.start(project=project, env={"CLAUDE_CONFIG_DIR": str(claude)})
    # A tall frame reaches tmux a few KB at a time: wait for the lines asserted on, not the first one.
    term.wait_until(
        lambda s: "Trust this folder?" in s
        and "command .claude/commands/review.md" in unwrapped(s)
        and "skill .claude/skills/local-smoke-test" in unwrapped(s),
        "the trust question with the folder's command and skill",
    )
    subprocess.run(["tmux", "send-keys", "-t", term.name, "y"], check=True, timeout=10)
    term.wait_for(READY)

    term.type("/skills")
    term.wait_until(
        lambda s: "local-smoke-test (project)" in unwrapped(s)
        and "Local verification checklist for 1Code desktop startup" in unwrapped(s),
        "/skills with the project's skill",
    )
    term.type("/help")
    # soak8's 6th run beside read a frame whose top held "(user:tools)" while its lower part
    # (with /review and /smoke) was still the previous frame's.
    term.wait_until(
        lambda s: "(user:tools)" in s and "/review" in s and "/smoke" in s, "/help with the folder's commands"
    )

    term.type("/smoke startup and login")
    screen = unwrapped(term.wait_for("SMOKE-PLAN: tracks kept separate."))
    assert "Skill" in screen and "local-smoke-test" in screen

    term.type("/branch-note blue")
    term.wait_for("NOTED-THE-WORD")
    term.type("/exit")
    code, _ = term.wait_exit(20)
    assert code == 0

    (records,) = term.transcripts()
    prompts = [r["message"]["content"] for r in records if r["type"] == "user" and isinstance(r["message"]["content"], str)]
    smoke = next(p for p in prompts if "targeted smoke verification" in p)
    assert "Plan and, if appropriate, run targeted smoke verification for:\n\nstartup and login\n" in smoke
    assert "The word is WORD-blue-ECHOED." in prompts
    results = [b for r in records if r["type"] == "user" and isinstance(r["message"]["content"], list)
               for b in r["message"]["content"] if b.get("type") == "tool_result"]  # fmt: skip
    assert any("Keep these tracks separate:" in str(b["content"]) for b in results)
    # The wire: the skill was offered by name and description in the Skill tool.
    first = next(e.body for e in tmux_bed.server.recordings.messages if "targeted smoke" in str(e.body["messages"]))
    [skill_tool] = [t for t in first["tools"] if t["name"] == "Skill"]
    assert "- local-smoke-test: Local verification checklist" in skill_tool["description"]
