"""The terminal tests never touch the real home: the run's tmux server is private (its socket under
the run's own TMUX_TMPDIR) and was started with a throwaway HOME, every program is started with its
variables on the command line, and only tests/ui/tmux.py (and the conftest) start tmux sessions."""

from __future__ import annotations

import os
import re
import subprocess
import time
import uuid
from pathlib import Path

from agent_repl.transcript.paths import project_dir

from .tmux import TmuxBed, tmux

TESTS = Path(__file__).resolve().parents[1]
ALLOWED = {TESTS / "ui" / "tmux.py", TESTS / "conftest.py", Path(__file__).resolve()}  # this file: on purpose
STARTS_A_PROGRAM = re.compile(r"""["'](new-session|new-window|respawn-pane|split-window)["']""")


def test_the_run_has_a_private_tmux_server_with_a_throwaway_home():
    socket = tmux("display-message", "-p", "#{socket_path}").stdout.strip()
    assert socket.startswith(os.environ["TMUX_TMPDIR"]), socket
    server_home = tmux("show-environment", "-g", "HOME").stdout.strip().removeprefix("HOME=")
    assert server_home and Path(server_home).resolve() != Path.home().resolve()
    variables = tmux("show-environment", "-g").stdout
    assert not re.search(r"^(ANTHROPIC_|AGENT_REPL_|CLAUDE_)", variables, re.MULTILINE), variables


def test_a_session_given_the_real_home_by_env_still_gets_the_throwaway_one(tmp_path: Path):
    # How a test once wrote into the real ~/.agent_repl: `env=` given to a tmux client is ignored.
    out = tmp_path / "home-seen"
    name = f"isolation-{uuid.uuid4().hex[:8]}"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, f'echo "$HOME|${{AGENT_REPL_HOME:-}}" > {out}; sleep 5'],
        env={**os.environ, "HOME": str(Path.home()), "AGENT_REPL_HOME": str(Path.home() / ".agent_repl")},
        check=True,
        timeout=10,
    )
    try:
        for _ in range(100):
            if out.exists() and out.read_text().strip():
                break
            time.sleep(0.05)
        home, agent_home = out.read_text().strip().split("|")
    finally:
        tmux("kill-session", "-t", name)
    assert Path(home).resolve() != Path.home().resolve() and agent_home == ""


def test_an_app_in_a_terminal_writes_under_the_test_home_only(tmux_bed: TmuxBed):
    project = tmux_bed.project()
    real = project_dir(Path.home() / ".agent_repl", project.resolve())
    tmux_bed.script([{"text": "Written where it belongs."}])
    term = tmux_bed.start(project=project)
    term.wait_for("/help lists commands")
    term.type("say something")
    term.wait_for("Written where it belongs.")
    term.keys("C-d")
    term.wait_for("AGENT-REPL-EXIT=0")
    assert term.transcripts(), "the transcript is under the test's home"
    assert not real.exists(), f"a terminal test wrote into the real home: {real}"


def test_only_the_tmux_helper_starts_programs_in_tmux():
    offenders = [
        str(path.relative_to(TESTS))
        for path in TESTS.rglob("*.py")
        if path not in ALLOWED and STARTS_A_PROGRAM.search(path.read_text())
    ]
    assert offenders == [], f"start tmux sessions through tests/ui/tmux.py (open_terminal), not in {offenders}"
