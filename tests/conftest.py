"""Options and fixtures shared by every test directory."""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help="run the reliability tests at full size (same as AGENT_REPL_LONG_TESTS=1)",
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project to work in."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# Demo project\n\nA tiny project for tests.\n")
    (root / "src" / "app.py").write_text("def main():\n    # TODO: greet properly\n    print('hi')\n")
    (root / "src" / "util.py").write_text("VALUE = 42  # TODO: make configurable\n")
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"
