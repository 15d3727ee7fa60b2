from __future__ import annotations

from pathlib import Path

import pytest

from agent_repl.core.tooling.tool import ToolContext


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(
        cwd=work, tool_results_dir=tmp_path / "session" / "tool-results", tool_use_id="toolu_test1"
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: takes a second or more (kept in the default run)")
