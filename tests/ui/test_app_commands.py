"""Slash commands, keys and the input in the app, on fixed sessions (no model calls)."""

from __future__ import annotations

import json
from pathlib import Path

from agent_repl.core.model.messages import Usage
from agent_repl.ui.app import AgentApp
from agent_repl.ui.screens.pickers import ResumePicker, SnipPicker
from agent_repl.ui.screens.viewer import OutputViewer
from agent_repl.ui.widgets.compact_divider import CompactDivider
from agent_repl.ui.widgets.messages import AssistantMessageView, CommandOutput, UserMessageView
from agent_repl.ui.widgets.tool_block import ToolBlock

from .conftest import StaticLauncher, emulator_launcher, fixed_session
from .helpers import assistant, compact_boundary, names, tool_result, tool_use, user, wait_for


def _history() -> list:
    return [
        user("meta", "Today's date: 2026-01-01", is_meta=True),
        user("u1", "look at the logs"),
        tool_use("a1", "toolu_1", "Bash", {"command": "cat build.log"}),
        tool_result("r1", "toolu_1", "line 1\nline 2"),
        assistant(
            "a2",
            "The log has two lines.",
            usage=Usage(input_tokens=100, cache_read_input_tokens=900, output_tokens=20),
        ),
        user("u2", "thanks"),
        assistant("a3", "You're welcome.", message_id="msg_2"),
    ]


def _app(tmp_path: Path, history: list | None = None, **kwargs) -> AgentApp:
    project = tmp_path / "p"
    project.mkdir(exist_ok=True)
    session = fixed_session(_history() if history is None else history, cwd=project, home=tmp_path / "home")
    return AgentApp(StaticLauncher(session), animate=False, warm_client=False, **kwargs)


async def _command(pilot, seen, line: str):
    seen.clear()
    await pilot.press(*line, "enter")
    return await wait_for(
        pilot, lambda: [m for m in seen if type(m).__name__ == "CommandFinished"], what=line
    )


async def test_a_resumed_history_is_drawn_whole_with_status_from_the_last_usage(tmp_path):
    app = _app(tmp_path)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        kinds = [type(w).__name__ for w in app.conversation.children]
        assert kinds == [
            "UserMessageView",
            "ToolBlock",
            "AssistantMessageView",
            "UserMessageView",
            "AssistantMessageView",
        ]
        tool = app.conversation.query_one(ToolBlock)
        assert tool.item.call.result == "line 1\nline 2" and tool.collapsed
        assert app.status.cache_read_share == 0.9
        # The figure is the next request's estimate, the one /context shows (not the last usage alone).
        from agent_repl.context.report import context_usage

        await wait_for(pilot, lambda: app.status.context_counted, what="the context figure")
        assert app.status.context_tokens == context_usage(app.session).used_tokens >= 1020


async def test_a_resumed_history_is_drawn_before_the_token_encoder_is_loaded(tmp_path, monkeypatch):
    import functools
    import threading

    from agent_repl.core.model import tokens

    allowed = threading.Event()

    def load_when_allowed():
        allowed.wait(60)
        return tokens.load_encoding()

    monkeypatch.setattr(tokens, "_encoding", functools.cache(load_when_allowed))
    app = _app(tmp_path)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        await pilot.pause()
        assert [type(w).__name__ for w in app.conversation.children][-1] == "AssistantMessageView"
        assert not app.status.context_counted and "to autocompact" not in str(app.status.render())
        allowed.set()
        await wait_for(pilot, lambda: app.status.context_counted, what="the context figure")
        assert tokens.encoder_loaded()
        assert "to autocompact" in str(app.status.render())


async def test_a_resumed_history_whose_counts_are_known_shows_its_figure_without_loading_the_encoder(
    tmp_path, monkeypatch
):
    import functools

    from agent_repl.context.facts import FactCache
    from agent_repl.core.model import tokens

    def no_encoder():
        raise AssertionError("the encoder was loaded")

    monkeypatch.setattr(tokens, "_encoding", functools.cache(no_encoder))
    # As if the transcript's token-counts records covered every text the view holds.
    monkeypatch.setattr(
        FactCache, "_known_count", lambda self, text: max(1, len(text) // 4) if text else None
    )
    app = _app(tmp_path)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        await wait_for(pilot, lambda: app.status.context_counted, what="the context figure")
        assert not tokens.encoder_loaded()
        assert "to autocompact" in str(app.status.render())


async def test_help_cost_model_and_unknown_commands_render_their_results(tmp_path):
    app = _app(tmp_path)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        [done] = await _command(pilot, seen, "/help")
        assert type(done.result).__name__ == "HelpReport"
        assert {"/context", "/snip", "/resume", "/clear", "/cost", "/model", "/exit"} <= {
            c.name for c in done.result.commands
        }
        [done] = await _command(pilot, seen, "/cost")
        assert type(done.result).__name__ == "CostReport"
        [done] = await _command(pilot, seen, "/model claude-haiku-4-5")
        assert app.session.model == "claude-haiku-4-5" and app.status.model == "claude-haiku-4-5"
        assert app.session.projector.state.config.effective_window == 180_000
        [done] = await _command(pilot, seen, "/nope")
        assert done.result.level == "error"
        [done] = await _command(pilot, seen, "/uncompact")
        assert done.result.level == "warning" and "no compaction" in done.result.text
        outputs = app.conversation.query(CommandOutput)
        assert [o.command for o in outputs] == ["/help", "/cost", "/model", "/nope", "/uncompact"]


async def test_context_shows_grid_table_and_largest_entries(tmp_path):
    app = _app(tmp_path)
    seen: list = []
    async with app.run_test(size=(120, 60), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        [done] = await _command(pilot, seen, "/context")
        report = done.result.report
        assert report.history_messages == 7 and report.used_tokens > 0
        assert [item.id for item in report.largest if item.role == "user"]
        await pilot.pause()
        output = app.conversation.query(CommandOutput).last()
        assert output.command == "/context"
        assert app.session.sink.records == []  # a dry run: nothing written


async def test_snip_by_id_marks_the_messages_and_the_picker_snips_a_range(tmp_path):
    from agent_repl.context.ids import short_id

    history = _history() + [user("u3", "one more"), assistant("a4", "ok", message_id="msg_3")]
    app = _app(tmp_path, history)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        [done] = await _command(pilot, seen, f"/snip {short_id('u1')}")
        assert type(done.result).__name__ == "SnipDone"
        assert {"u1"} <= app.session.projector.state.snip.snipped
        first_prompt = app.conversation.query(UserMessageView).first()
        assert first_prompt.has_class("-snipped")

        seen.clear()
        await pilot.press(*"/snip", "enter")
        picker = await wait_for(pilot, lambda: isinstance(app.screen, SnipPicker) and app.screen)
        ids = [item.id or item.uuid for item in picker.items]
        assert "u1" not in [item.uuid for item in picker.items]  # already snipped
        at = ids.index("a2")
        assert ids[at + 1] == short_id("u2")
        assert ids[-2:] == [short_id("u3"), "a4"]  # between turns the latest turn is offered too
        await pilot.press(*["up"] * (len(ids) - 1 - at), "space", "down", "space", "enter")  # a2 through u2
        await wait_for(pilot, lambda: [m for m in seen if type(m).__name__ == "CommandFinished"])
        assert {"a2", "u2"} <= app.session.projector.state.snip.snipped
        snipped_views = [w for w in app.conversation.query(AssistantMessageView) if w.has_class("-snipped")]
        assert [w.item.key for w in snipped_views] == ["a2"]


async def test_the_view_after_a_compaction_has_a_divider_whose_summary_expands(tmp_path):
    history = _history() + [
        compact_boundary("b1", 154_000),
        user("s1", "## Summary\nWe read the build log.", is_compact_summary=True),
        user("u9", "and now?"),
    ]
    app = _app(tmp_path, history)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        divider = app.conversation.query_one(CompactDivider)
        assert divider.collapsed and divider.item.summary.startswith("## Summary")
        assert divider.item.pre_tokens == 154_000
        divider.collapsed = False
        await pilot.pause()
        assert not divider.collapsed


async def test_a_persisted_output_opens_in_the_viewer(tmp_path):
    saved = tmp_path / "toolu_9.txt"
    saved.write_text("\n".join(f"row {n}" for n in range(5000)))
    preview = f"<persisted-output>\nOutput too large (38.8 KB). Full output saved to: {saved}\n\nPreview:\nrow 0\n</persisted-output>"
    history = [
        user("u1", "count"),
        tool_use("a1", "toolu_9", "Bash", {"command": "seq"}),
        tool_result(
            "r1",
            "toolu_9",
            preview,
            structured={"persistedOutputPath": str(saved), "persistedOutputSize": 38_890},
        ),
    ]
    app = _app(tmp_path, history)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        tool = app.conversation.query_one(ToolBlock)
        assert tool.item.persisted_path == str(saved) and tool.item.persisted_size == "38.0 KB"
        tool.query_one("CollapsibleTitle").focus()
        await pilot.press("o")
        viewer = await wait_for(pilot, lambda: isinstance(app.screen, OutputViewer) and app.screen)
        await pilot.pause()
        log = viewer.query_one("Log")
        assert log.line_count == 5000
        await pilot.press("escape")
        assert not isinstance(app.screen, OutputViewer)


async def test_up_and_down_walk_this_projects_prompts_and_tab_completes(tmp_path):
    app = _app(tmp_path)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        await _command(pilot, seen, "/cost")
        await _command(pilot, seen, "/help")
        prompt = app.prompt
        await pilot.press(*"draft")
        await pilot.press("up")
        assert prompt.text == "/help"
        await pilot.press("up")
        assert prompt.text == "/cost"
        await pilot.press("down", "down")
        assert prompt.text == "draft"
        prompt.load_text("")
        await pilot.press(*"/he", "tab")
        assert prompt.text == "/help "
        prompt.load_text("")
        await pilot.press(*"/co", "tab")
        await pilot.pause()
        assert prompt.text == "/co"
        assert "/context" in str(app.query_one("#hint").render()) and "/cost" in str(
            app.query_one("#hint").render()
        )
        prompt.load_text("")
        (app.launcher.cwd / "notes.txt").write_text("x")
        await pilot.press(*"read no", "tab")
        assert prompt.text == "read notes.txt "
        await pilot.press("ctrl+j")
        assert prompt.text.count("\n") == 1
        stored = (tmp_path / "home" / "history").glob("*.jsonl")
        assert [p.read_text().splitlines() for p in stored] == [['"/cost"', '"/help"']]


async def test_ctrl_c_twice_exits_and_closes_the_session(tmp_path):
    app = _app(tmp_path)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        await pilot.press(*"typed")
        await pilot.press("ctrl+c")
        assert app.prompt.text == "" and app.is_running
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.is_running, what="exit")
    assert app.return_code == 0


async def test_ctrl_d_exits(tmp_path):
    app = _app(tmp_path)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: not app.is_running, what="exit")


async def test_clear_starts_a_new_session_and_resume_picks_the_old_one_back(emulator, project, home):
    server = emulator([{"text": "First answer."}])
    app = AgentApp(emulator_launcher(server, project, home), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: "TurnFinished" in names(seen))
        first_id = app.session.session_id
        [done] = await _command(pilot, seen, "/clear")
        assert done.result.previous_id == first_id and app.session.session_id != first_id
        assert done.result.previous_path.endswith(f"{first_id}.jsonl")
        assert list(app.conversation.query(UserMessageView)) == []

        seen.clear()
        await pilot.press(*"/resume", "enter")
        picker = await wait_for(pilot, lambda: isinstance(app.screen, ResumePicker) and app.screen)
        assert [s.session_id for s in picker.sessions] == [first_id]
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: [
                m for m in seen if type(m).__name__ == "CommandFinished" and m.line.startswith("/resume /")
            ],
        )
        assert app.session.session_id == first_id
        assert [w.item.text for w in app.conversation.query(UserMessageView)] == ["hello"]
        assert app.conversation.query(AssistantMessageView).last().source == "First answer."


async def test_compact_summarizes_through_the_emulator_and_uncompact_takes_it_back(emulator, project, home):
    server = emulator([{"text": "First answer."}, {"text": "Second answer."}])
    app = AgentApp(emulator_launcher(server, project, home), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        for prompt in ("one", "two"):
            seen.clear()
            await pilot.press(*prompt, "enter")
            await wait_for(pilot, lambda: "TurnFinished" in names(seen))
        [done] = await _command(pilot, seen, "/compact keep the answers")
        assert type(done.result).__name__ == "CompactDone", done.result
        assert done.result.tokens_before > 0 and done.result.tokens_after > 0  # a tiny talk may not shrink
        divider = await wait_for(pilot, lambda: app.conversation.query(CompactDivider).first(None))
        assert divider.item.summary and divider.mark is None
        requests = [e.body for e in server.recordings.messages if e.status == 200]
        assert "keep the answers" in json.dumps(requests[-1])

        [done] = await _command(pilot, seen, "/uncompact")
        assert done.result.level == "info"
        assert divider.mark == "undone"
        [done] = await _command(pilot, seen, "/uncompact")
        assert done.result.level == "warning"  # nothing left to undo


async def test_entries_inside_a_committed_collapse_are_marked(tmp_path):
    app = _app(tmp_path)
    seen: list = []
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        state = app.session.projector.state
        state.collapse.owner.update({"u2": "c1", "a3": "c1"})
        app.session_display.refresh_marks(app.session)
        await pilot.pause()
        marked = [w for w in app.conversation.children if getattr(w, "mark", None) == "collapsed"]
        assert [w.item.key for w in marked] == ["u2", "a3"]
        assert all(w.has_class("-in-collapse") for w in marked)


async def test_a_launch_error_exits_with_the_message_and_code_2(tmp_path):
    from agent_repl.ui.launcher import Launcher, LaunchError

    def prepare(stack):
        raise LaunchError("settings.json: not valid JSON")

    app = AgentApp(Launcher(tmp_path, prepare), animate=False, warm_client=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: not app.is_running, what="exit")
    assert app.return_code == 2


async def test_a_model_without_a_known_price_shows_its_cost_as_unknown(tmp_path):
    from rich.console import Console

    from agent_repl.ui.render import render_cost

    project = tmp_path / "p"
    project.mkdir()
    session = fixed_session(_history(), cwd=project, home=tmp_path / "home")
    session.model = "claude-mythos-preview"  # the pricing page lists no price for it
    session.add_usage(Usage(input_tokens=1_000, output_tokens=50), "claude-mythos-preview")
    assert session.cost_total_usd is None
    app = AgentApp(StaticLauncher(session), animate=False, warm_client=False)
    seen: list = []
    async with app.run_test(size=(140, 40), message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: "SessionReady" in names(seen))
        line = str(app.status.render())
        assert "cost: ?" in line and "$" not in line
        [done] = await _command(pilot, seen, "/cost")
        assert done.result.cost_usd is None
    console = Console(record=True, width=80)
    console.print(render_cost(done.result))
    cost_row = [row for row in console.export_text().splitlines() if row.startswith("cost")]
    assert cost_row and cost_row[0].split() == ["cost", "?"]
