"""Options shared by every test directory."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help="run the reliability tests at full size (same as AGENT_REPL_LONG_TESTS=1)",
    )
