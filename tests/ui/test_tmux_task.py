"""Task sub-agents in a real terminal: the block while they work and after, in the app and --inline."""

from __future__ import annotations

from pathlib import Path

from .tmux import TmuxBed, unwrapped

READY = "/help lists commands"
INLINE_READY = "/help for help"


def script(project: Path) -> tuple[list[dict], list[dict]]:
    main = [
        {"tools": [
            {"name": "Task", "input": {"description": "Find the readme", "prompt": "AGENT-A: find the readme"}},
            {"name": "Task", "input": {"description": "Read the app", "prompt": "AGENT-B: read the app"}},
        ]},
        {"text": "Both sub-agents came back."},
    ]
    agents = [
        {"prompt": "AGENT-A", "steps": [
            {"tools": [{"name": "Glob", "input": {"pattern": "*.md"}}]},
            {"tools": [{"name": "Read", "input": {"file_path": str(project / "README.md")}}]},
            {"text": "The readme is README.md: a demo project."},
        ]},
        {"prompt": "AGENT-B", "steps": [
            {"tools": [{"name": "Grep", "input": {"pattern": "Demo", "path": "."}}]},
            {"text": "The app greets."},
        ]},
    ]
    return main, agents


def test_a_task_turn_shows_collapsed_blocks_and_the_app_exits_cleanly(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    tmux_bed.script(*script(project))
    term = tmux_bed.start(project=project)
    term.wait_for(READY)
    term.type("ask two sub-agents")
    screen = term.wait_for("Both sub-agents came back.")
    flat = unwrapped(screen)
    assert "Task(Find the readme) Done (2 tool uses" in flat
    assert "Task(Read the app) Done (1 tool use" in flat
    # Collapsed: the sub-agents' own calls and answers are not on the screen.
    assert "Glob(*.md)" not in flat and "The readme is README.md" not in flat
    term.type("/exit")
    code, _ = term.wait_exit(20)
    assert code == 0
    # What the model saw: only the two answers came back into the main conversation.
    (records,) = term.transcripts()
    results = [b for r in records if r["type"] == "user" and isinstance(r["message"]["content"], list)
               for b in r["message"]["content"] if b.get("type") == "tool_result"]
    assert sorted(str(b["content"]) for b in results) == ["The app greets.", "The readme is README.md: a demo project."]


def test_inline_mode_prints_each_sub_agent_call_under_its_task(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    tmux_bed.script(*script(project))
    term = tmux_bed.start("--inline", project=project)
    term.wait_for(INLINE_READY)
    term.type("ask two sub-agents")
    screen = unwrapped(term.wait_for("Both sub-agents came back."))
    assert "⎿ Find the readme: ● Glob(*.md)" in screen
    assert "⎿ Find the readme: ● Read(" in screen
    assert "⎿ Read the app: ● Grep(Demo)" in screen
    term.type("/exit")
    code, _ = term.wait_exit(20)
    assert code == 0
