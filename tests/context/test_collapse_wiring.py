"""Collapse is chosen in settings (file, environment or flag) and wired into the pipeline."""

from __future__ import annotations

import json

import pytest

from agent_repl.bootstrap import build_pipeline
from agent_repl.core.config.settings import SettingsError, load_settings
from agent_repl.tools import builtin_tools


def test_the_strategy_comes_from_a_settings_file_or_the_environment(tmp_path):
    home = tmp_path / "home"
    env = {"AGENT_REPL_HOME": str(home)}
    assert load_settings(cwd=tmp_path, env=env).context_strategy == "autocompact"
    (tmp_path / ".agent_repl").mkdir()
    (tmp_path / ".agent_repl" / "settings.json").write_text(json.dumps({"context_strategy": "collapse"}))
    assert load_settings(cwd=tmp_path, env=env, trusted=True).context_strategy == "collapse"
    both = {**env, "AGENT_REPL_CONTEXT_STRATEGY": "autocompact"}
    assert load_settings(cwd=tmp_path, env=both, trusted=True).context_strategy == "autocompact"
    flag = load_settings(cwd=tmp_path, env=both, overrides={"context_strategy": "collapse"}, trusted=True)
    assert flag.context_strategy == "collapse"
    with pytest.raises(SettingsError, match="context_strategy"):
        load_settings(cwd=tmp_path, env={**env, "AGENT_REPL_CONTEXT_STRATEGY": "fold"})


def test_the_pipeline_runs_collapse_after_microcompact_with_the_chosen_strategy(tmp_path):
    settings = load_settings(
        cwd=tmp_path, env={"AGENT_REPL_HOME": str(tmp_path / "home")}, overrides={"context_strategy": "collapse"}
    )
    pipeline = build_pipeline(settings, tmp_path, builtin_tools(), tmp_path / "results")
    names = [stage.name for stage in pipeline.stages]
    assert names.index("collapse") == names.index("microcompact") + 1
    assert pipeline.state.config.strategy == "collapse"
