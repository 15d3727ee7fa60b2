"""SVG snapshots of the screens people look at, at a fixed size, with the clock and ids fixed.

Update after an intended change with `pytest tests/ui/test_snapshots.py --snapshot-update` and
look at the report before committing the new SVGs.
"""

from __future__ import annotations

import subprocess
import sys

from agent_repl.core.model.events import (
    AssistantMessageEvent,
    ContextProjected,
    TextDelta,
    ToolResultEvent,
    ToolUseStarted,
    TurnEnded,
    TurnStarted,
    UsageEvent,
)
from agent_repl.core.model.messages import Usage
from agent_repl.core.permissions.rules import PermissionRequest
from agent_repl.ui.app import AgentApp
from agent_repl.ui.screens.permission import PermissionScreen
from agent_repl.ui.screens.pickers import SnipPicker
from agent_repl.ui.widgets.compact_divider import CompactDivider
from agent_repl.ui.widgets.messages import CommandOutput
from agent_repl.ui.widgets.tool_block import ToolBlock

from .conftest import SNAPSHOT_LOCK, StaticLauncher, fixed_session
from .helpers import assistant, compact_boundary, tool_result, tool_use, user, wait_for

SIZE = (110, 40)
USAGE = Usage(
    input_tokens=40, cache_creation_input_tokens=1_200, cache_read_input_tokens=6_400, output_tokens=85
)


def _history() -> list:
    return [
        user("meta", "Today's date: 2026-01-01", is_meta=True),
        user("u1", "what is in build.log?"),
        tool_use("a1", "toolu_1", "Read", {"file_path": "build.log"}),
        tool_result("r1", "toolu_1", "1\tcompiling\n2\tdone", structured="Read 2 lines"),
        assistant("a2", "It compiled and finished: **2 lines**.", usage=USAGE),
        user("u2", "and the tests?"),
        tool_use("a3", "toolu_2", "Bash", {"command": "make test"}, message_id="msg_2"),
        tool_result("r2", "toolu_2", "14 passed", structured="14 passed"),
        assistant("a4", "All **14** tests pass.", message_id="msg_2", usage=USAGE),
    ]


def _app(snapshot_dirs, history: list) -> AgentApp:
    project, home = snapshot_dirs
    session = fixed_session(history, cwd=project, home=home)
    return AgentApp(StaticLauncher(session), animate=False, warm_client=False, clock=lambda: 1_000.0)


async def _settle(pilot) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: app.holder is not None, what="the session")
    app.prompt.cursor_blink = False
    await pilot.pause()


async def _command(pilot, line: str) -> None:
    before = len(pilot.app.query(CommandOutput))
    await pilot.press(*line, "enter")
    await wait_for(pilot, lambda: len(pilot.app.query(CommandOutput)) > before, what=line)
    await pilot.pause()


def test_another_suite_waits_for_the_snapshot_directory_while_a_test_holds_it(snapshot_dirs):
    """Two suites side by side (two worktrees) would empty each other's fixed directory."""
    probe = (
        "import fcntl, sys\n"
        f"with open({str(SNAPSHOT_LOCK)!r}, 'a') as lock:\n"
        "    try:\n"
        "        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "    except BlockingIOError:\n"
        "        sys.exit(3)\n"
    )
    assert subprocess.run([sys.executable, "-c", probe], timeout=30).returncode == 3
    project, _ = snapshot_dirs
    assert (project / "README.md").is_file()


def test_first_screen(snap_compare, snapshot_dirs):
    assert snap_compare(_app(snapshot_dirs, []), terminal_size=SIZE, run_before=_settle)


def test_a_turn_with_tool_calls_and_a_persisted_preview(snap_compare, snapshot_dirs):
    project, home = snapshot_dirs
    saved = home / "tool-results" / "toolu_seq.txt"
    saved.parent.mkdir(parents=True)
    saved.write_text("\n".join(str(n) for n in range(1, 200_001)))
    preview = (
        f"<persisted-output>\nOutput too large (1.2 MB). Full output saved to: {saved}\n\n"
        "Preview (first 2.0 KB):\n1\n2\n3\n...\n</persisted-output>"
    )
    prompt = user("t-u1", "how many numbers does seq 1 200000 print?")
    said = assistant("t-a1", "I'll run it and count.", message_id="m1")
    call = tool_use("t-a2", "toolu_seq", "Bash", {"command": "seq 1 200000"}, message_id="m1")
    result = tool_result(
        "t-r1",
        "toolu_seq",
        preview,
        structured={"persistedOutputPath": str(saved), "persistedOutputSize": 1_288_895},
    )
    answer = assistant(
        "t-a3",
        "It printed **200,000** lines; the full output is saved, press `o` on the block to read it.",
        message_id="m2",
        usage=USAGE,
    )
    steps = [
        (prompt, TurnStarted(prompt=prompt.text(), message=prompt)),
        (None, ContextProjected(request_index=1, wire_messages=2, estimated_tokens=7_600)),
        (None, TextDelta(text="I'll run it ")),
        (None, TextDelta(text="and count.")),
        (None, UsageEvent(usage=USAGE, model="claude-sonnet-5-5")),
        (said, AssistantMessageEvent(message=said)),
        (call, AssistantMessageEvent(message=call)),
        (None, ToolUseStarted(tool_use_id="toolu_seq", name="Bash", input={"command": "seq 1 200000"})),
        (
            result,
            ToolResultEvent(
                tool_use_id="toolu_seq",
                name="Bash",
                is_error=False,
                summary="200000 lines",
                persisted_path=str(saved),
                message=result,
            ),
        ),
        (None, ContextProjected(request_index=2, wire_messages=4, estimated_tokens=8_100)),
        (None, TextDelta(text=answer.text())),
        (None, UsageEvent(usage=USAGE, model="claude-sonnet-5-5")),
        (answer, AssistantMessageEvent(message=answer)),
        (None, TurnEnded(reason="completed", num_requests=2, usage=USAGE + USAGE)),
    ]

    async def run_before(pilot) -> None:
        await _settle(pilot)
        app = pilot.app
        for message, event in steps:
            if message is not None:
                app.session.messages.append(message)
            await app.on_agent_app_agent_event_posted(AgentApp.AgentEventPosted(event))
        await pilot.pause()
        app.query_one(ToolBlock).collapsed = False
        await pilot.pause()

    assert snap_compare(
        _app(snapshot_dirs, [user("meta", "date", is_meta=True)]), terminal_size=SIZE, run_before=run_before
    )


def _context_report():
    """A fixed report: the snapshot is about how /context looks, not about today's tool descriptions
    (`test_app_commands` runs the real command)."""
    from agent_repl.context.report import ContextItem, ContextReport
    from agent_repl.core.loop.projection import StageReport

    categories = {
        "System prompt": 1_900,
        "Tools": 14_200,
        "Memory and context": 2_400,
        "Messages": 21_000,
        "Tool results": 48_500,
        "Persisted previews": 6_100,
        "Autocompact buffer": 33_000,
        "Free space": 72_900,
    }
    return ContextReport(
        model="claude-sonnet-4-5",
        context_window=200_000,
        effective_window=180_000,
        used_tokens=94_100,
        categories=categories,
        largest=[
            ContextItem("k3v9qa", "tool result", 12_400, "1\timport json"),
            ContextItem("", "assistant", 3_100, "Here is the plan for the refactor:"),
            ContextItem("p0z7mc", "user", 1_200, "please read the whole module and explain it"),
        ],
        stages=[
            StageReport("boundary", 131_000, 131_000, 0, "0 entries before or snipped"),
            StageReport("budget", 131_000, 104_600, 3, "3 new replacements, 0 re-applied"),
            StageReport("snip", 104_600, 98_300, 2, "2 snip-safe tool calls, 4 entries"),
            StageReport("microcompact", 98_300, 94_100, 6, "6 results cleared"),
        ],
        view_messages=212,
        history_messages=240,
    )


def test_context_command(snap_compare, snapshot_dirs):
    from agent_repl.commands.results import ContextView

    async def run_before(pilot) -> None:
        await _settle(pilot)
        await pilot.app.show_result("/context", ContextView(_context_report()))
        await pilot.pause()
        pilot.app.conversation.scroll_end(animate=False, immediate=True)
        await pilot.pause()

    assert snap_compare(_app(snapshot_dirs, _history()), terminal_size=(110, 50), run_before=run_before)


def test_snip_picker(snap_compare, snapshot_dirs):
    async def run_before(pilot) -> None:
        await _settle(pilot)
        await pilot.press(*"/snip", "enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SnipPicker))
        await pilot.press("up", "up", "space", "up", "space")
        await pilot.pause()

    history = _history() + [user("u3", "thanks"), assistant("a5", "You're welcome.", message_id="msg_3")]
    assert snap_compare(_app(snapshot_dirs, history), terminal_size=SIZE, run_before=run_before)


def test_permission_modal(snap_compare, snapshot_dirs):
    async def run_before(pilot) -> None:
        await _settle(pilot)
        request = PermissionRequest(
            "Bash", "git push origin main", "Push the branch to the remote", always_rules=("Bash(git push:*)",)
        )
        pilot.app.push_screen(PermissionScreen(request))
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, PermissionScreen))
        await pilot.pause()

    assert snap_compare(_app(snapshot_dirs, _history()), terminal_size=SIZE, run_before=run_before)


def test_the_view_after_a_compaction(snap_compare, snapshot_dirs):
    history = _history() + [
        compact_boundary("b1", 154_000),
        user(
            "s1",
            "This session is being continued from an earlier conversation.\n\n"
            "## Primary request\nMake the build pass.\n\n## Current work\nThe tests pass; next is the "
            "release note.",
            is_compact_summary=True,
        ),
        user("u9", "write the release note"),
        assistant(
            "a9",
            "Here is a draft:\n\n- the build passes\n- **14** tests pass",
            message_id="msg_9",
            usage=Usage(input_tokens=20, cache_read_input_tokens=3_000, output_tokens=40),
        ),
    ]

    async def run_before(pilot) -> None:
        await _settle(pilot)
        pilot.app.query_one(CompactDivider).collapsed = False
        await pilot.pause()
        pilot.app.conversation.scroll_end(animate=False, immediate=True)
        await pilot.pause()

    assert snap_compare(_app(snapshot_dirs, history), terminal_size=SIZE, run_before=run_before)
