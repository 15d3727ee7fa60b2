"""The core stays headless: importing it must not load a UI library (STYLE.md)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEADLESS = [
    "agent_repl.core.loop.query",
    "agent_repl.session",
    "agent_repl.context.pipeline",
    "agent_repl.transcript.loader",
    "agent_repl.transcript.writer",
    "agent_repl.bootstrap",
    "agent_repl.print_mode",
    "agent_repl.sdk",
    "agent_repl.commands",
    "agent_repl.commands.builtin",
    "agent_repl.emulator.server",
    "agent_repl.mcp.manager",
    "agent_repl.agents.runner",
    "agent_repl.tools",
]


@pytest.mark.parametrize("module", HEADLESS)
def test_headless_module_does_not_import_ui_libraries(module):
    code = (
        f"import sys, {module}\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'prompt_toolkit'))\n"
        "print(','.join(bad))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"{module} loaded {done.stdout.strip()}"


def test_import_linter_contracts_hold():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint_imports)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


# Loaded only when they are used: the API client's SDK for a request, the MCP SDK for a configured
# server, YAML for a command, skill or agent file with front matter.
NOT_BEFORE_THEY_ARE_USED = ("anthropic", "mcp", "yaml")


def test_starting_the_app_or_a_session_loads_no_library_it_does_not_use_yet():
    code = (
        "import sys, agent_repl.cli, agent_repl.ui.app, agent_repl.bootstrap\n"
        f"print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in {NOT_BEFORE_THEY_ARE_USED!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_the_models_of_turn_events_hooks_and_transcript_records_are_built_when_first_used():
    code = (
        "import agent_repl.cli, agent_repl.ui.app, agent_repl.bootstrap\n"
        "from agent_repl.core.model.events import TextDelta\n"
        "from agent_repl.core.hooks.payloads import HookOutput\n"
        "from agent_repl.transcript.records import TokenRatioRecord\n"
        "models = (TextDelta, HookOutput, TokenRatioRecord)\n"
        "print(sum(m.__pydantic_complete__ for m in models))\n"
        "TextDelta(text='x'); HookOutput.model_validate({}); TokenRatioRecord.model_json_schema()\n"
        "print(sum(m.__pydantic_complete__ for m in models))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "3"]


# Loaded on first use, never by importing the start-up path: the cl100k encoder (print mode counts
# with upper bounds first), YAML (front matter), gitignore patterns (a path rule, a Glob walk),
# the shell parser behind the Bash permission rules (the first Bash check) and the compaction
# machinery (the first compaction or session-memory extraction; a session holds only its compactor),
# the MCP client, and the models of a hook's input and answer (the first hook that runs).
COMPACTION_MACHINERY = [
    "agent_repl.context.compact",
    "agent_repl.context.compact_api",
    "agent_repl.context.compact_prompt",
    "agent_repl.context.fork",
    "agent_repl.context.shrink",
    "agent_repl.context.skill_reminders",
    "agent_repl.context.touched_files",
]
# The MCP client: only a session with a configured server (or one to report on) imports it, and
# ToolSearch, which loads deferred MCP tools.
MCP_CLIENT = ["agent_repl.mcp.manager", "agent_repl.mcp.connection", "agent_repl.mcp.tool", "agent_repl.tools.tool_search"]
LOADED_ON_FIRST_USE = [
    "tiktoken",
    "yaml",
    "pathspec",
    "agent_repl.core.permissions.bash_rules",
    "agent_repl.core.permissions.shell_syntax",
    "agent_repl.core.sandbox.auto_allow",
    *COMPACTION_MACHINERY,
    *MCP_CLIENT,
    "agent_repl.core.hooks.payloads",
]


def loaded_after(setup: str, modules: list[str]) -> list[str]:
    """Which of `modules` a fresh interpreter holds once it has run `setup`."""
    code = f"import sys\n{setup}\nprint(','.join(m for m in {modules!r} if m in sys.modules))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return [m for m in done.stdout.strip().split(",") if m]


def test_the_start_up_path_leaves_first_use_modules_unloaded():
    setup = "import agent_repl.cli, agent_repl.bootstrap, agent_repl.print_mode"
    assert loaded_after(setup, LOADED_ON_FIRST_USE) == []


def test_the_app_and_a_turn_leave_the_compaction_machinery_unloaded():
    setup = (
        "import agent_repl.cli, agent_repl.core.loop.query, agent_repl.ui.app, agent_repl.ui.launcher\n"
        "agent_repl.ui.launcher._warm_imports()"
    )
    assert loaded_after(setup, COMPACTION_MACHINERY) == []


# What the app needs only once a permission question is asked: the modal and the command view it
# shows (with the shell reading behind its notes).
PERMISSION_QUESTION = ["agent_repl.ui.screens.permission", "agent_repl.ui.command_view", "agent_repl.core.permissions.command_marks"]


def test_the_app_imports_the_permission_modal_with_its_first_question():
    assert loaded_after("import agent_repl.ui.app", PERMISSION_QUESTION) == []


# The app holds its session (`SessionHolder`) before anyone runs a command: the built-in commands,
# the results they return and the line parser are imported with the first line submitted or completed.
BUILT_IN_COMMANDS = ["agent_repl.commands.builtin", "agent_repl.commands.results", "agent_repl.commands.submit"]
_SHOW_A_SESSION_THEN_ASK_FOR_HELP = """
import asyncio, sys
from pathlib import Path
from agent_repl.core.config.settings import Settings
from agent_repl.ui.app import AgentApp
from agent_repl.ui.launcher import Launcher

async def main():
    settings = Settings(home=Path(sys.argv[1]), api_key="k", base_url="http://127.0.0.1:9")
    app = AgentApp(Launcher.for_settings(settings, Path(sys.argv[2])), warm_client=False)
    seen = []
    async with app.run_test(size=(100, 30), message_hook=seen.append) as pilot:
        for _ in range(3000):
            if any(type(m).__name__ == "SessionReady" for m in seen):
                break
            await asyncio.sleep(0.01)
        await pilot.pause()
        print(",".join(m for m in MODULES if m in sys.modules))
        await pilot.press("/", "h", "e", "l", "p", "enter")
        for _ in range(3000):
            if done := [m for m in seen if type(m).__name__ == "CommandFinished"]:
                break
            await asyncio.sleep(0.01)
        print(",".join(m for m in MODULES if m in sys.modules), type(done[0].result).__name__)

asyncio.run(main())
"""


def test_the_app_shows_a_session_before_importing_the_built_in_commands(tmp_path):
    code = f"MODULES = {BUILT_IN_COMMANDS!r}\n" + _SHOW_A_SESSION_THEN_ASK_FOR_HELP
    (tmp_path / "project").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "home"), str(tmp_path / "project")],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["", ",".join(BUILT_IN_COMMANDS) + " HelpReport"], done.stdout
