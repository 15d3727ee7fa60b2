"""On resume: the results Claude Code had cleared stay cleared, and `clear_on_resume` decides
whether the gap since an old session's last reply clears the rest."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from agent_repl.bootstrap import build_pipeline
from agent_repl.context.resume import rebuild_state
from agent_repl.context.state import CLEARED_TOOL_RESULT, PipelineConfig, PipelineState
from agent_repl.core.config.settings import Settings
from agent_repl.core.model.messages import AssistantMessage, TextBlock, UserMessage, iso_timestamp
from agent_repl.transcript.loader import load_session

from .test_microcompact import T0, history_with_results, make, results_in

FIXTURES = Path(__file__).resolve().parents[1] / "transcript" / "fixtures"


def _cleared(wire: list[dict]) -> list[str]:
    return [tid for tid, b in results_in(wire).items() if str(b["content"]).startswith(CLEARED_TOOL_RESULT)]


def test_the_results_a_claude_code_microcompact_cleared_stay_cleared():
    loaded = load_session(FIXTURES / "cc_2.1.22_microcompact.jsonl")
    [boundary] = [m for m in loaded.messages if getattr(m, "subtype", "") == "microcompact_boundary"]
    compacted = boundary.metadata["compactedToolIds"]
    last = max(m.timestamp for m in loaded.messages if isinstance(m, AssistantMessage))
    # Resumed a minute after the last reply: nothing else is old enough to clear.
    now = datetime.fromisoformat(last.replace("Z", "+00:00")) + timedelta(minutes=1)
    pipeline = make(PipelineConfig(), now)
    history = [*loaded.messages, UserMessage(content="go on")]
    rebuild_state(pipeline.state, history, loaded.side_records)
    wire = pipeline.project(history).wire
    assert len(compacted) == 6
    assert sorted(_cleared(wire)) == sorted(compacted)
    # The history itself keeps the results.
    assert all(not r.text().startswith(CLEARED_TOOL_RESULT) for m in history if isinstance(m, UserMessage) for r in m.tool_results())


def _resumed(clear_on_resume: bool, now: datetime) -> tuple:
    history = history_with_results(8)
    pipeline = make(PipelineConfig(clear_on_resume=clear_on_resume), now)
    rebuild_state(pipeline.state, history, [])
    return pipeline, history


def test_by_default_an_old_session_is_cleared_on_its_first_request_after_resume():
    pipeline, history = _resumed(True, T0 + timedelta(days=2))
    assert _cleared(pipeline.project(history).wire) == ["t0", "t1", "t2"]


def test_with_clear_on_resume_off_the_first_request_keeps_every_result_and_a_later_pause_clears():
    later = T0 + timedelta(days=2)
    now = [later]
    pipeline, history = _resumed(False, later)
    pipeline.state.clock = lambda: now[0]
    projection = pipeline.project(history)
    assert _cleared(projection.wire) == [] and not projection.records
    # A reply of this run, then a pause past the cache's lifetime: the clear happens as usual.
    history += [
        AssistantMessage(message_id="new", content=[TextBlock(text="answer")], timestamp=iso_timestamp(later)),
        UserMessage(content="after lunch"),
    ]
    now[0] = later + timedelta(minutes=62)
    assert _cleared(pipeline.project(history).wire) == ["t0", "t1", "t2"]


def test_a_fresh_session_is_not_affected_by_the_setting():
    pipeline = make(PipelineConfig(clear_on_resume=False), T0 + timedelta(minutes=62))
    assert PipelineState().microcompact.resumed_after is None
    assert _cleared(pipeline.project(history_with_results(8)).wire) == ["t0", "t1", "t2"]


def test_the_setting_reaches_the_pipeline(tmp_path):
    for value in (True, False):
        settings = Settings(clear_on_resume=value)
        assert build_pipeline(settings, tmp_path, [], tmp_path / "tr").state.config.clear_on_resume is value
