"""Fixtures for the UI tests: the emulator as the model, fixed sessions for snapshots."""

from __future__ import annotations

import fcntl
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_repl.bootstrap import build_pipeline
from agent_repl.core.api.client import ModelClient
from agent_repl.core.config.settings import Settings
from agent_repl.core.model.messages import Message
from agent_repl.core.model.transcript_sink import MemorySink
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer
from agent_repl.session import Session
from agent_repl.tools import builtin_tools
from agent_repl.ui.launcher import Launcher

# Snapshots show these paths, so every run needs the same ones: a fixed directory, emptied before
# each test. Suites running side by side (two worktrees) take turns on it through the lock file.
SNAPSHOT_ROOT = Path("/tmp/agent-repl-ui-snapshots")
SNAPSHOT_LOCK = Path("/tmp/agent-repl-ui-snapshots.lock")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# Demo project\n\nA tiny project for tests.\n")
    (root / "src" / "app.py").write_text("print('hi')\n")
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def emulator() -> Iterator[Any]:
    servers: list[EmulatorServer] = []

    def start(steps: list[dict[str, Any]]) -> EmulatorServer:
        server = EmulatorServer(policy=ScriptPolicy({"steps": steps}), summarizer=AgentSummarizer())
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def settings_for(server: EmulatorServer | None, home: Path, **extra: Any) -> Settings:
    return Settings(
        home=home,
        api_key="sk-ant-test-ui",
        base_url=server.base_url if server else "http://127.0.0.1:9",
        **extra,
    )


@pytest.fixture
def deterministic_uuids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every uuid4 in the run comes from a counter, so ids, tags and paths repeat exactly."""
    counter = iter(range(1, 1_000_000))
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=next(counter) | (4 << 76) | (1 << 63)))


@pytest.fixture
def snapshot_dirs() -> Iterator[tuple[Path, Path]]:
    """(project, home) at fixed paths, emptied first, held by this test alone until it ends."""
    with SNAPSHOT_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(SNAPSHOT_ROOT, ignore_errors=True)
        project = SNAPSHOT_ROOT / "project"
        project.mkdir(parents=True)
        (project / "README.md").write_text("# Demo project\n")
        try:
            yield project, SNAPSHOT_ROOT / "home"
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class StaticLauncher(Launcher):
    """Hands the app a session made beforehand (no settings files, no emulator)."""

    def __init__(self, session: Session) -> None:
        super().__init__(session.cwd, lambda stack: None)
        self.session = session
        self.settings = session.settings

    async def open(self, ask, confirm_trust=None):  # type: ignore[override]
        self.session.ask = ask
        return self.session


def fixed_session(
    history: list[Message],
    *,
    cwd: Path,
    home: Path,
    session_id: str = "5e55a0de-0000-4000-8000-000000000001",
    context_window: int | None = None,
) -> Session:
    """A session over a hand-built history, writing to memory, whose client is never called."""
    settings = Settings(
        home=home, api_key="unused", base_url="http://127.0.0.1:9", context_window=context_window
    )
    tools = builtin_tools()
    results = home / "tool-results"
    pipeline = build_pipeline(settings, cwd, tools, results)
    return Session(
        session_id=session_id,
        cwd=cwd,
        settings=settings,
        client=ModelClient(api_key="unused", base_url="http://127.0.0.1:9", max_retries=0),
        tools=tools,
        projector=pipeline,
        sink=MemorySink(),
        tool_results_dir=results,
        history=history,
        context_provider=lambda _: "Today's date: 2026-01-01",
    )


def emulator_launcher(server: EmulatorServer, cwd: Path, home: Path, **settings: Any) -> Launcher:
    return Launcher.for_settings(settings_for(server, home, **settings), cwd)



@pytest.fixture(scope="session")
def tmux_bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One emulator and one home for every terminal test of the run (see `tests/ui/tmux.py`)."""
    import shutil

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    from .tmux import tmux_bed as make_bed

    yield from make_bed(tmp_path_factory.mktemp("tmux"))
