"""Protected paths: files other programs take commands or grants from are never written unasked.

Through the real tool runner: Edit and Write ask for them in acceptEdits, under an allow rule,
with permissions skipped and after a hook's "allow"; with nobody to ask they are refused with a
one-line reason; a Bash redirection into one is not approved by a rule.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_repl.core.loop.tool_execution import ToolCallOutcome, ToolRuntime, execute_tool_calls
from agent_repl.core.model.messages import ToolUseBlock
from agent_repl.core.permissions.mode import PermissionMode
from agent_repl.core.permissions.protected_paths import is_protected, protected_reason
from agent_repl.core.permissions.rules import Decision, PermissionPolicy, PermissionRequest
from agent_repl.tools import builtin_tools

# Paths inside the project whose change would grant something or run code unasked.
PROTECTED = [
    ".agent_repl/settings.json",
    ".mcp.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/agents/helper.md",
    ".git/config",
    ".git/hooks/x",
    ".envrc",
    ".vscode/tasks.json",
    ".devcontainer/devcontainer.json",
    "sub/.git/config",
    "sub/.envrc",
]


class Asker:
    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.requests: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Decision:
        self.requests.append(request)
        return self.answers.pop(0)


def runtime(tmp_path: Path, ask, *, allow=(), skip_all: bool = False) -> ToolRuntime:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return ToolRuntime(
        tools={t.name: t for t in builtin_tools()},
        cwd=project,
        tool_results_dir=tmp_path / "results",
        permissions=PermissionPolicy.from_rules(allow, [], skip_all=skip_all, roots=[project]),
        ask=ask,
        state={},
    )


async def write(rt: ToolRuntime, relative: str, content: str = "x\n") -> ToolCallOutcome:
    path = rt.cwd / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    use = ToolUseBlock(id="toolu_write", name="Write", input={"file_path": str(path), "content": content})
    outcomes = [o async for o in execute_tool_calls(rt, [use], asyncio.Event()) if isinstance(o, ToolCallOutcome)]
    return outcomes[0]


async def bash(rt: ToolRuntime, command: str) -> ToolCallOutcome:
    use = ToolUseBlock(id="toolu_bash", name="Bash", input={"command": command})
    outcomes = [o async for o in execute_tool_calls(rt, [use], asyncio.Event()) if isinstance(o, ToolCallOutcome)]
    return outcomes[0]


@pytest.mark.parametrize("relative", PROTECTED)
def test_the_predicate_names_each_protected_path(tmp_path: Path, relative: str) -> None:
    path = tmp_path / "project" / relative
    assert is_protected(path), relative
    reason = protected_reason(path)
    assert reason is not None and str(path) in reason and "\n" not in reason


@pytest.mark.parametrize("relative", ["src/app.py", "README.md", ".github/workflows/ci.yml", "git/config", ".env"])
def test_ordinary_project_files_are_not_protected(tmp_path: Path, relative: str) -> None:
    assert not is_protected(tmp_path / "project" / relative)


def test_a_link_into_a_protected_folder_is_protected(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text("")
    (project / "innocent.txt").symlink_to(project / ".git" / "config")
    assert is_protected(project / "innocent.txt")


def test_the_agents_own_settings_in_its_home_are_protected(tmp_path: Path) -> None:
    env = {"AGENT_REPL_HOME": str(tmp_path / "home")}
    assert is_protected(tmp_path / "home" / "settings.json", env)
    assert is_protected(tmp_path / "home" / "trusted-folders.json", env)
    assert is_protected(tmp_path / "home" / "agents" / "x.md", env)
    assert not is_protected(tmp_path / "home" / "projects" / "notes.txt", env)


@pytest.mark.parametrize("relative", PROTECTED)
async def test_accept_edits_asks_before_writing_a_protected_path(tmp_path: Path, relative: str) -> None:
    asker = Asker(Decision.DENY)
    rt = runtime(tmp_path, asker)
    rt.mode.set(PermissionMode.ACCEPT_EDITS)
    outcome = await write(rt, relative)
    assert len(asker.requests) == 1, "acceptEdits wrote a protected path without a question"
    assert "writing it always asks" in asker.requests[0].reason
    assert outcome.output.is_error and not (rt.cwd / relative).exists()
    # An ordinary file still goes through unasked in acceptEdits.
    assert not (await write(rt, "src/app.py")).output.is_error and len(asker.requests) == 1


async def test_always_on_a_protected_path_is_this_once_and_does_not_switch_the_mode(tmp_path: Path) -> None:
    asker = Asker(Decision.ALLOW_ALWAYS, Decision.ALLOW_ONCE)
    rt = runtime(tmp_path, asker)
    assert not (await write(rt, ".envrc")).output.is_error
    assert rt.mode.mode is PermissionMode.DEFAULT
    assert not (await write(rt, ".envrc", "y\n")).output.is_error
    assert len(asker.requests) == 2


@pytest.mark.parametrize("setup", ["allow rule", "skip permissions"])
async def test_no_rule_and_no_mode_spares_the_question(tmp_path: Path, setup: str) -> None:
    asker = Asker(Decision.DENY)
    if setup == "allow rule":
        rt = runtime(tmp_path, asker, allow=["Write", "Edit"])
    else:
        rt = runtime(tmp_path, asker, skip_all=True)
    outcome = await write(rt, ".mcp.json", '{"mcpServers": {}}')
    assert len(asker.requests) == 1 and outcome.output.is_error
    assert not (rt.cwd / ".mcp.json").exists()


async def test_with_nobody_to_ask_a_protected_write_is_refused_with_one_reason(tmp_path: Path) -> None:
    rt = runtime(tmp_path, None, allow=["Write"])
    rt.mode.set(PermissionMode.ACCEPT_EDITS)
    outcome = await write(rt, ".agent_repl/settings.json", '{"permissions": {"allow": ["Bash"]}}')
    assert outcome.output.is_error and outcome.output.denied
    why = [line for line in outcome.output.content.splitlines() if line.startswith("Why:")]
    assert len(why) == 1 and "settings.json" in why[0] and "always asks" in why[0]
    assert not (rt.cwd / ".agent_repl" / "settings.json").exists()


@pytest.mark.parametrize(
    "command", ["echo '{}' > .mcp.json", "echo x >> .envrc", "echo x > .claude/settings.json", "echo x > sub/.git/config"]
)
async def test_a_redirection_into_a_protected_path_is_not_approved_by_a_rule(tmp_path: Path, command: str) -> None:
    asker = Asker(Decision.DENY)
    rt = runtime(tmp_path, asker, allow=["Bash(echo:*)"])
    (rt.cwd / ".claude").mkdir()
    (rt.cwd / "sub" / ".git").mkdir(parents=True)
    outcome = await bash(rt, command)
    assert len(asker.requests) == 1 and "take commands or grants from" in asker.requests[0].reason
    assert outcome.output.is_error
    assert not (await bash(rt, "echo x > notes.txt")).output.is_error and len(asker.requests) == 1


@pytest.mark.parametrize("command", ["echo x > .envrc", "cd sub && echo x > config"])
async def test_a_protected_redirection_asks_even_with_permissions_skipped(tmp_path: Path, command: str) -> None:
    asker = Asker(Decision.DENY)
    rt = runtime(tmp_path, asker, skip_all=True)
    (rt.cwd / "sub" / ".git").mkdir(parents=True)
    rt.cwd.joinpath("sub").rename(rt.cwd / "sub-real")
    (rt.cwd / "sub").symlink_to(rt.cwd / "sub-real" / ".git")
    outcome = await bash(rt, command)
    assert len(asker.requests) == 1 and outcome.output.is_error
    assert not (await bash(rt, "echo x > notes.txt")).output.is_error and len(asker.requests) == 1
