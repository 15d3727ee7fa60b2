"""The cost-aware trigger's margin is a setting that reaches the pipeline."""

from __future__ import annotations

import json
from pathlib import Path

from agent_repl.bootstrap import build_pipeline
from agent_repl.core.config.settings import load_settings


def test_a_settings_file_sets_the_cost_trigger_margin(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"compact_cost_trigger_margin": 2.5}))
    settings = load_settings(cwd=tmp_path, env={"AGENT_REPL_HOME": str(home)})
    assert settings.compact_cost_trigger_margin == 2.5
    assert load_settings(cwd=tmp_path, env={"AGENT_REPL_HOME": str(tmp_path / "none")}).compact_cost_trigger_margin == 2.0
    pipeline = build_pipeline(settings, tmp_path, [], tmp_path / "results")
    assert pipeline.state.config.cost_trigger_margin == 2.5
