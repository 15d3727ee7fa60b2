"""Options and fixtures shared by every test directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

_TMUX_DIR_KEY = pytest.StashKey[str]()

# The tiers (see README, "Tests"): every test gets one from where it lives, so a new test needs no
# marker. Unit tests run in-process against fakes and the emulator; the terminal tests drive the
# real program in tmux; everything else (e2e, reliability, ui without tmux...) is `e2e`.
# `slow` is put on a test by hand: fuzzing with large example counts, 200 MB outputs, the crash loop.
UNIT_PATHS = (
    "core",
    "context",
    "tools",
    "commands",
    "transcript",
    "test_import_cycles.py",
    "test_import_hygiene.py",
)
_TESTS_ROOT = Path(__file__).resolve().parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help="run the reliability tests at full size (same as AGENT_REPL_LONG_TESTS=1)",
    )


def tier_of(path: Path) -> str:
    """`unit`, `tmux` or `e2e` for a test file under tests/."""
    parts = path.resolve().relative_to(_TESTS_ROOT).parts
    if parts[0] in UNIT_PATHS:
        return "unit"
    if parts[0] == "ui" and path.name.startswith("test_tmux_"):
        return "tmux"
    return "e2e"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(tier_of(Path(item.path)))


def pytest_configure(config: pytest.Config) -> None:
    # The terminal tests get a tmux server of their own: a shared one carries other people's
    # sessions and options (window sizes), which made screens differ from run to run.
    # Each process (each xdist worker too) has its own socket directory, so its own server.
    directory = tempfile.mkdtemp(prefix="art-tmux-")
    config.stash[_TMUX_DIR_KEY] = directory
    os.environ["TMUX_TMPDIR"] = directory
    os.environ.pop("TMUX", None)
    if shutil.which("tmux"):
        _start_tmux_server(Path(directory))


def _start_tmux_server(directory: Path) -> None:
    """Start this run's tmux server with a home of its own.

    A running server starts every program with the environment it was started with and ignores
    the `env=` of later clients: a test that passed its home that way wrote into the real
    ~/.agent_repl. Started here, the server's HOME is a throwaway folder and no agent-repl
    variable of the caller's shell leaks in, so a test that forgets its home writes nowhere real.
    """
    home = directory / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_", "CLAUDE_"))}
    env["HOME"] = str(home)
    subprocess.run(
        ["tmux", "-f", "/dev/null", "new-session", "-d", "-s", "keep-server-up", "sleep 86400"],
        env=env,
        capture_output=True,
        timeout=10,
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    directory = config.stash.get(_TMUX_DIR_KEY, None)
    if directory is None:
        return
    if shutil.which("tmux"):
        subprocess.run(["tmux", "kill-server"], capture_output=True, timeout=10)
    shutil.rmtree(directory, ignore_errors=True)


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
