"""`/effort` without a model call: what it shows, what it refuses, what it saves and where, and the
request fields the session then sends (the wire itself is checked in tests/ui/test_tmux_effort.py)."""

from __future__ import annotations

import json
from pathlib import Path

from agent_repl.commands import CommandContext, SessionHolder, default_registry
from agent_repl.commands.results import TextOutput
from agent_repl.core.api.client import ModelClient
from agent_repl.core.config.settings import Settings
from agent_repl.core.model.transcript_sink import MemorySink
from agent_repl.session import Session


def _session(tmp_path: Path, **settings_fields) -> Session:
    from agent_repl.bootstrap import build_pipeline
    from agent_repl.tools import builtin_tools

    settings = Settings(home=tmp_path / "home", api_key="x", base_url="http://127.0.0.1:9", **settings_fields)
    tools = builtin_tools()
    return Session(
        session_id="s-1",
        cwd=tmp_path,
        settings=settings,
        client=ModelClient(api_key="x", base_url="http://127.0.0.1:9", max_retries=0),
        tools=tools,
        projector=build_pipeline(settings, tmp_path, tools, tmp_path / "r"),
        sink=MemorySink(),
        tool_results_dir=tmp_path / "r",
    )


async def _run(session: Session, line: str, *, interactive: bool = True) -> TextOutput:
    async def opener(resume, previous):  # pragma: no cover - /effort never switches sessions
        raise AssertionError("no switch expected")

    context = CommandContext(SessionHolder(session, opener), default_registry(), interactive=interactive)
    result = await default_registry().run(line, context)
    assert isinstance(result, TextOutput)
    return result


def _fields(session: Session) -> dict:
    return session.projector.state.config.request_fields


def _saved(tmp_path: Path) -> dict:
    path = tmp_path / "home" / "settings.json"
    return json.loads(path.read_text()) if path.exists() else {}


async def test_effort_shows_the_default_then_sets_saves_and_sends_a_level(tmp_path):
    session = _session(tmp_path)
    shown = await _run(session, "/effort")
    assert shown.text.startswith("effort: the API's default (none sent)")
    assert "claude-sonnet-5-5 takes: low, medium, high, xhigh, max" in shown.text
    assert "output_config" not in _fields(session)

    done = await _run(session, "/effort low")
    assert done.level == "info" and "saved as the default for claude-sonnet-5-5" in done.text
    assert _fields(session)["output_config"] == {"effort": "low"}
    assert _saved(tmp_path) == {"model_effort": {"claude-sonnet-5-5": "low"}}
    assert (await _run(session, "/effort")).text.startswith("effort: low (chosen with /effort for this session)")

    # A new session reads the saved level back.
    again = _session(tmp_path, model_effort=_saved(tmp_path)["model_effort"])
    assert _fields(again)["output_config"] == {"effort": "low"}
    assert (await _run(again, "/effort")).text.startswith("effort: low (saved for claude-sonnet-5-5")


async def test_max_is_for_this_session_only_and_auto_forgets_the_saved_level(tmp_path):
    session = _session(tmp_path)
    await _run(session, "/effort medium")
    done = await _run(session, "/effort max")
    assert done.text == "effort: max for this session only (not saved)"
    assert _fields(session)["output_config"] == {"effort": "max"}
    assert _saved(tmp_path) == {"model_effort": {"claude-sonnet-5-5": "medium"}}

    auto = await _run(session, "/effort auto")
    assert "forgotten" in auto.text
    assert "output_config" not in _fields(session)
    assert _saved(tmp_path) == {}


async def test_levels_the_model_or_the_thinking_mode_cannot_take_are_refused(tmp_path):
    session = _session(tmp_path, thinking="between_tools")
    refused = await _run(session, "/effort xhigh")
    assert refused.level == "error" and "needs up-front thinking" in refused.text
    assert (await _run(session, "/effort extreme")).level == "error"
    assert "output_config" not in _fields(session)
    assert _fields(session)["thinking"] == {"type": "between_tools"}

    legacy = _session(tmp_path, model="claude-haiku-4-5")
    refused = await _run(legacy, "/effort low")
    assert refused.level == "error" and refused.text == "claude-haiku-4-5 takes no effort level"
    assert _fields(legacy) == {}  # no thinking by default: nothing asked


async def test_a_settings_file_that_is_not_json_keeps_the_choice_for_the_session(tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "settings.json").write_text("{ not json")
    session = _session(tmp_path)
    done = await _run(session, "/effort high")
    assert done.level == "warning" and "not saved" in done.text and "not valid JSON" in done.text
    assert _fields(session)["output_config"] == {"effort": "high"}
    assert (tmp_path / "home" / "settings.json").read_text() == "{ not json"


def test_a_saved_level_wins_over_the_effort_setting_and_is_dropped_for_a_model_that_cannot_take_it(tmp_path):
    session = _session(tmp_path, effort="high", model_effort={"claude-sonnet-5-5": "low"})
    assert session.effort == "low"
    session.model = "claude-opus-4-5"  # takes low, medium, high: the `effort` setting applies
    assert session.effort == "high"
    session.model = "claude-haiku-4-5"  # takes none
    assert session.effort is None and "output_config" not in _fields(session)


async def test_print_mode_saves_nothing(tmp_path):
    session = _session(tmp_path)
    done = await _run(session, "/effort low", interactive=False)
    assert done.text == "effort: low for this session only (not saved)"
    assert _fields(session)["output_config"] == {"effort": "low"}
    assert _saved(tmp_path) == {}
