"""Reliability fixtures: the long switch and the figures for RELIABILITY.md (the project and
home fixtures come from tests/conftest.py).

`--long` (or AGENT_REPL_LONG_TESTS=1) runs every test at the size RELIABILITY.md reports; the
default sizes keep the suite fast. Each test records what it measured with the `figures`
fixture; the figures are printed at the end of the run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

_FIGURES: list[tuple[str, dict[str, Any]]] = []


def is_long(config: pytest.Config) -> bool:
    return bool(config.getoption("--long", default=False)) or os.environ.get("AGENT_REPL_LONG_TESTS") == "1"


@pytest.fixture
def long_run(request: pytest.FixtureRequest) -> bool:
    return is_long(request.config)


@pytest.fixture
def size(long_run: bool) -> Callable[[int, int], int]:
    """`size(normal, long)`: the count this run uses."""
    return lambda normal, long: long if long_run else normal


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """A dict the test fills with what it measured; printed in the terminal summary."""
    found: dict[str, Any] = {}
    yield found
    if found:
        _FIGURES.append((request.node.nodeid, found))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if not _FIGURES:
        return
    terminalreporter.section(f"reliability figures ({'long' if is_long(config) else 'normal'} size)")
    for nodeid, found in _FIGURES:
        shown = ", ".join(f"{k}={v}" for k, v in found.items())
        terminalreporter.write_line(f"{nodeid}: {shown}")
