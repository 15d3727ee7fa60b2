"""The system prompt and the session's opening context.

The system prompt holds only what never changes within a project (instructions, working
directory, platform), so its bytes stay cached across turns and resumes. What changes from
day to day (the date, git status, project instruction files) goes into one meta user message
at the start of the session, which the transcript keeps and a resume re-sends byte for byte.
"""

from __future__ import annotations

import os
import platform
import stat
from datetime import date
from pathlib import Path

from agent_repl.core.permissions.read_access import inside, opened_refusal, refusal
from agent_repl.core.permissions.safe_git import git_branch, git_status

INSTRUCTIONS = """\
You are agent-repl, a coding assistant working in the user's terminal. You help with software \
tasks: reading and explaining code, finding things, running commands, fixing bugs.

How to work:
- Use the tools to look before you answer; do not guess at file contents or command output.
- Prefer Grep and Glob to find things and Read to look at files; use Bash for everything else.
- Read ranges of large files with offset and limit instead of whole files.
- A result wrapped in <persisted-output> was too large to show; its full text is saved at the \
path given, and you can Read parts of it.
- Keep answers short and concrete. Quote paths and line numbers when you refer to code.
- Say so plainly when something failed or you are unsure."""

PROJECT_INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTION_FILE_CHARS = 40_000


def environment_section(cwd: Path) -> str:
    return f"Environment:\nWorking directory: {cwd}\nPlatform: {platform.system().lower()}"


def build_system_prompt(cwd: Path, instructions: str | None = None, append: str | None = None) -> str:
    """Our instructions (or `instructions`, from `--system-prompt`, even "") and the environment
    section, which always stays so the prompt is never empty; then `append`, when given."""
    head = INSTRUCTIONS if instructions is None else instructions.strip()
    prompt = f"{head}\n\n{environment_section(cwd)}" if head else environment_section(cwd)
    return f"{prompt}\n\n{append.strip()}" if append and append.strip() else prompt


def git_summary(cwd: Path, max_status_lines: int = 30) -> str:
    """The branch and short status, read by git with nothing the repository configures able to run."""
    branch = git_branch(cwd)
    if branch is None:
        return "Not a git repository."
    lines = git_status(cwd)
    if lines is None:
        return f"Git branch: {branch}\nGit status: (unavailable)"
    shown = "\n".join(lines[:max_status_lines]) or "(clean)"
    more = f"\n... and {len(lines) - max_status_lines} more" if len(lines) > max_status_lines else ""
    return f"Git branch: {branch}\nGit status:\n{shown}{more}"


def user_instruction_files(home: Path) -> list[tuple[Path, Path]]:
    """The user's own instruction files, each with the folder it must stay inside: the agent's
    `<home>/AGENTS.md`, and Claude Code's `~/.claude/CLAUDE.md` for users who bring theirs."""
    claude = Path(os.path.expanduser("~")) / ".claude"
    return [(home / "AGENTS.md", home), (claude / "CLAUDE.md", claude)]


def instruction_text(path: Path, cwd: Path) -> str | None:
    """The text of an instruction file (at most MAX_INSTRUCTION_FILE_CHARS, marked when cut), or
    None when there is none to read: it must be a regular file that Read would read unasked,
    inside `cwd` (the project, or the user's own folder for their files), so a link a repository
    ships cannot put a file from elsewhere (a key, a shell's rc file, /proc) into the model's
    context before anyone approved anything."""
    project = (Path(os.path.realpath(cwd)),)
    if refusal(path) is not None or not inside(Path(os.path.realpath(path)), project):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        opened = os.readlink(f"/proc/self/fd/{fd}") if os.path.isdir("/proc/self/fd") else str(path)
        if not stat.S_ISREG(os.fstat(fd).st_mode) or opened_refusal(fd) is not None:
            return None
        if not inside(Path(opened), project):
            return None
        data = os.read(fd, MAX_INSTRUCTION_FILE_CHARS * 4 + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = data.decode("utf-8", errors="replace")
    if len(text) > MAX_INSTRUCTION_FILE_CHARS:
        text = text[:MAX_INSTRUCTION_FILE_CHARS] + "\n[... truncated]"
    return text


def session_context(cwd: Path, today: date | None = None, *, home: Path | None = None) -> str:
    """The opening meta message: date, git state, the user's own instruction files (given the
    agent's home) and then the project's, so the project's word comes last."""
    parts = [f"Today's date: {(today or date.today()).isoformat()}", git_summary(cwd)]
    for path, folder in user_instruction_files(home) if home is not None else []:
        if not os.path.lexists(path):
            continue
        text = instruction_text(path, folder)
        if text is None:
            parts.append(f"{path} was not read: it is not a regular file inside {folder}.")
        else:
            parts.append(f"Contents of {path} (the user's own instructions, for every project):\n\n{text}")
    for name in PROJECT_INSTRUCTION_FILES:
        path = cwd / name
        if not os.path.lexists(path):
            continue
        text = instruction_text(path, cwd)
        if text is None:
            parts.append(f"{path} was not read: it is not a regular file inside the project.")
        else:
            parts.append(f"Contents of {path} (project instructions, follow them):\n\n{text}")
    body = "\n\n".join(parts)
    return f"<system-reminder>\nContext for this session:\n\n{body}\n</system-reminder>"
