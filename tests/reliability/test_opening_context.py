"""The project instruction files of the opening context are read as Read would read them.

CLAUDE.md and AGENTS.md go into the model's context before anything is approved, so a link a
repository ships must not bring in a file from elsewhere (a credentials file, /proc), and a
FIFO or a huge file must not hang the start or fill the memory.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent_repl.core.api.system_prompt import MAX_INSTRUCTION_FILE_CHARS, session_context

SECRET = "aws_secret_access_key = opening-context-outside-secret"


def test_instruction_files_that_lead_outside_the_project_are_not_read(project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "credentials").write_text(SECRET + "\n")
    (project / "CLAUDE.md").symlink_to(outside / "credentials")
    (project / "AGENTS.md").symlink_to("/proc/self/environ")
    context = session_context(project)
    assert "opening-context-outside-secret" not in context
    assert "ANTHROPIC" not in context and "PATH=" not in context
    for name in ("CLAUDE.md", "AGENTS.md"):
        assert f"{project / name} was not read: it is not a regular file inside the project." in context


def test_a_link_inside_the_project_is_read_and_odd_files_are_bounded(project):
    (project / "docs").mkdir()
    (project / "docs" / "agents.md").write_text("Run the tests with make test.\n")
    (project / "AGENTS.md").symlink_to(project / "docs" / "agents.md")
    os.mkfifo(project / "CLAUDE.md")  # opening it for reading would wait for a writer
    context = session_context(project)
    assert "Run the tests with make test." in context
    assert f"{project / 'CLAUDE.md'} was not read" in context
    (project / "CLAUDE.md").unlink()
    with open(project / "CLAUDE.md", "wb") as huge:  # 10 GB, sparse: only what is read is read
        huge.truncate(10 * 1024**3)
    context = session_context(project)
    assert "[... truncated]" in context and len(context) < MAX_INSTRUCTION_FILE_CHARS * 4


def test_a_directory_or_a_missing_link_target_says_so(project: Path):
    (project / "CLAUDE.md").mkdir()
    (project / "AGENTS.md").symlink_to(project / "gone.md")
    context = session_context(project)
    assert f"{project / 'CLAUDE.md'} was not read" in context and f"{project / 'AGENTS.md'} was not read" in context


def test_the_users_own_instruction_files_open_the_context_before_the_projects(project, tmp_path, monkeypatch):
    home = tmp_path / "agent-home"
    home.mkdir()
    user_home = tmp_path / "user"
    (user_home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(user_home))
    (home / "AGENTS.md").write_text("Always answer in British English.\n")
    (user_home / ".claude" / "CLAUDE.md").write_text("Prefer pytest over unittest.\n")
    (project / "AGENTS.md").write_text("This project uses tabs.\n")
    context = session_context(project, home=home)
    assert context.index("British English") < context.index("Prefer pytest") < context.index("uses tabs")
    assert f"Contents of {home / 'AGENTS.md'} (the user's own instructions" in context
    # Without a home (sub-agents, tests) only the project's files are read.
    assert "British English" not in session_context(project)


def test_a_users_instruction_file_that_leads_out_of_its_folder_is_not_read(project, tmp_path, monkeypatch):
    home = tmp_path / "agent-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
    (tmp_path / "elsewhere").write_text(SECRET + "\n")
    (home / "AGENTS.md").symlink_to(tmp_path / "elsewhere")
    context = session_context(project, home=home)
    assert "opening-context-outside-secret" not in context
    assert f"{home / 'AGENTS.md'} was not read: it is not a regular file inside {home}." in context
