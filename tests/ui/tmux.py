"""Driving `agent-repl` in a real terminal: tmux runs it, the test types keys and reads the screen.

One emulator and one home serve a whole test module (`TmuxBed`); each test gets its own project
directory and script. Waits are bounded and generous; nothing asserts a wall-clock time.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline.summary import AgentSummarizer

EXIT_MARKER = "AGENT-REPL-EXIT="
COLUMNS, ROWS = 120, 40
ESCAPE_PAUSE = 0.3
KEY_PAUSE = 0.1


def tmux(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=10)


_BORDERS = str.maketrans(dict.fromkeys("█▀▄│", " "))


def unwrapped(screen: str) -> str:
    """The screen's text with line breaks, box sides and runs of spaces as one space: lines wrap in a box."""
    return " ".join(screen.translate(_BORDERS).split())


def input_box(screen: str) -> str:
    """The text in the prompt input: the last box on the screen, just above the status line."""
    lines = screen.splitlines()
    tops = [i for i, line in enumerate(lines) if line.lstrip().startswith("╭")]
    if not tops:
        return ""
    inside = []
    for line in lines[tops[-1] + 1 :]:
        if line.lstrip().startswith("╰"):
            break
        inside.append(line.strip().strip("│").strip())
    return "\n".join(inside).strip()


class Terminal:
    """One tmux session running one `agent-repl` process."""

    def __init__(self, name: str, project: Path, home: Path) -> None:
        self.name = name
        self.project = project
        self.home = home

    def screen(self) -> str:
        return tmux("capture-pane", "-p", "-t", self.name).stdout

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if unwrapped(text) in unwrapped(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} did not appear; the screen was:\n{screen}")

    def wait_until(self, condition: Callable[[str], bool], what: str, timeout: float = 30.0) -> str:
        """Wait until `condition(screen)` holds."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if condition(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{what} did not happen; the screen was:\n{screen}")

    def wait_for_count(self, text: str, count: int, timeout: float = 30.0) -> str:
        """Wait until `text` is on the screen at least `count` times."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if unwrapped(screen).count(unwrapped(text)) >= count:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} did not appear {count} times; the screen was:\n{screen}")

    def wait_for_inline_prompt(self, timeout: float = 30.0) -> str:
        """Wait until the inline REPL's `>` prompt is the last line (it reads keys from then on)."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            lines = [line for line in screen.splitlines() if line.strip()]
            if lines and lines[-1].rstrip() == ">":
                return screen
            time.sleep(0.1)
        raise AssertionError(f"the inline prompt did not come back; the screen was:\n{screen}")

    def wait_until_gone(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        screen = self.screen()
        while time.monotonic() < deadline and unwrapped(text) in unwrapped(screen):
            time.sleep(0.1)
            screen = self.screen()
        assert unwrapped(text) not in unwrapped(screen), f"{text!r} stayed on the screen:\n{screen}"
        return screen

    def write(self, text: str) -> None:
        """Type `text` as keystrokes, literally (no Enter)."""
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True, timeout=10)

    def type(self, text: str) -> None:
        """Type a line and press Enter."""
        self.write(text)
        self.keys("Enter")

    def submit(self, text: str, timeout: float = 30.0) -> None:
        """Type a line into the full-screen app's input, and press Enter once it is all there
        (keys typed while the app is still busy with the last command could be lost)."""
        self.write(text)
        wanted = "".join(text.split())
        self.wait_until(lambda s: wanted in "".join(input_box(s).split()), f"{text!r} in the input", timeout)
        self.keys("Enter")

    def keys(self, *keys: str) -> None:
        """Press named keys (`Enter`, `Escape`, `C-c`, `Tab`...), a moment apart, as hands do."""
        for key in keys:
            subprocess.run(["tmux", "send-keys", "-t", self.name, key], check=True, timeout=10)
            # A key right behind Esc reads as Alt+key; hands are never that quick.
            time.sleep(ESCAPE_PAUSE if key == "Escape" else KEY_PAUSE)

    def paste(self, text: str) -> None:
        """Paste `text` the way a terminal does (bracketed, when the program asked for it)."""
        buffer = f"buf-{self.name}"
        subprocess.run(["tmux", "set-buffer", "-b", buffer, "--", text], check=True, timeout=10)
        subprocess.run(["tmux", "paste-buffer", "-p", "-d", "-b", buffer, "-t", self.name], check=True, timeout=10)

    def record_output(self, path: Path) -> None:
        """From now on, append every byte the program writes to the terminal to `path` (what the
        terminal was told, where `screen` shows only what it drew)."""
        subprocess.run(["tmux", "pipe-pane", "-o", "-t", self.name, f"cat >> {shlex.quote(str(path))}"], check=True, timeout=10)

    def paste_file(self, path: Path) -> None:
        """Paste the contents of `path` (bracketed, as `paste`); for texts too big for a command line."""
        buffer = f"buf-{self.name}"
        subprocess.run(["tmux", "load-buffer", "-b", buffer, str(path)], check=True, timeout=30)
        subprocess.run(["tmux", "paste-buffer", "-p", "-d", "-b", buffer, "-t", self.name], check=True, timeout=60)

    def wait_exit(self, timeout: float = 10.0) -> tuple[int, float]:
        """Wait for the process to end; its exit code and how long the wait took (for reports, not asserts)."""
        started = time.monotonic()
        screen = self.wait_for(EXIT_MARKER, timeout)
        code = unwrapped(screen).split(EXIT_MARKER, 1)[1].split()[0]
        return int(code), time.monotonic() - started

    def close(self) -> None:
        tmux("kill-session", "-t", self.name)

    def transcripts(self) -> list[list[dict[str, Any]]]:
        """This project's transcripts (newest last by name), each as its parsed records."""
        from agent_repl.transcript.paths import project_dir

        found = sorted(project_dir(self.home, self.project.resolve()).glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
        return [[json.loads(line) for line in path.read_text().splitlines() if line.strip()] for path in found]


def open_terminal(
    base_url: str | None,
    home: Path,
    project: Path,
    *args: str,
    columns: int = COLUMNS,
    rows: int = ROWS,
    env: dict[str, str] | None = None,
) -> Terminal:
    """`agent-repl ARGS` in a new tmux session of its own, talking to the emulator at `base_url`
    (None: no API settings at all, the offline demo).

    Every variable goes on the command line: a running tmux server starts programs with its own
    environment and ignores the one its client was given (test_tmux_isolation.py guards it).
    """
    name = f"agent-repl-e2e-{uuid.uuid4().hex[:8]}"
    api = {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "sk-ant-test-tmux"} if base_url else {}
    variables = {
        **api,
        "AGENT_REPL_HOME": str(home),
        "TERM": "xterm-256color",
        "PYTHONUNBUFFERED": "1",
        # tmux starts programs with its server's environment, not the test's: carry the path over.
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
        **(env or {}),
    }
    command = " ".join(
        [
            "env",
            *(f"{k}={shlex.quote(v)}" for k, v in variables.items()),
            shlex.quote(sys.executable),
            "-m",
            "agent_repl",
            *(shlex.quote(a) for a in args),
        ]
    )
    script = f"{command}; echo {EXIT_MARKER}$?; sleep 60"
    # A detached session may start at the server's default size whatever -x/-y said, and a program
    # that reads its size before a resize reaches it keeps the old one: fix the window's size
    # first, with a placeholder in the pane, then start the program in it.
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", str(columns), "-y", str(rows), "-c", str(project), "sleep 600"],
        check=True,
        timeout=10,
    )
    tmux("set-option", "-w", "-t", name, "window-size", "manual")
    tmux("resize-window", "-t", name, "-x", str(columns), "-y", str(rows))
    subprocess.run(["tmux", "respawn-pane", "-k", "-t", name, "-c", str(project), script], check=True, timeout=10)
    return Terminal(name, project, home)


class TmuxBed:
    """The emulator and the home a module's terminal tests share."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.server = EmulatorServer(policy=ScriptPolicy({"steps": []}), summarizer=AgentSummarizer())
        self.server.start()
        self._open: list[Terminal] = []

    def project(self) -> Path:
        path = self.root / f"project-{uuid.uuid4().hex[:6]}"
        path.mkdir(parents=True)
        (path / "README.md").write_text("# Demo project\n\nA tiny project for terminal tests.\n")
        return path

    def script(self, steps: list[dict[str, Any]], agents: list[dict[str, Any]] | None = None) -> None:
        """What the model answers from now on, step by step (`agents`: the sub-agents' own scripts)."""
        self.server.reset(policy=ScriptPolicy({"steps": steps, "agents": agents or []}))

    def start(
        self,
        *args: str,
        project: Path | None = None,
        columns: int = COLUMNS,
        rows: int = ROWS,
        env: dict[str, str] | None = None,
    ) -> Terminal:
        terminal = open_terminal(
            self.server.base_url, self.home, project or self.project(), *args, columns=columns, rows=rows, env=env
        )
        self._open.append(terminal)
        return terminal

    def close(self) -> None:
        for terminal in self._open:
            terminal.close()
        self.server.stop()


def tmux_bed(root: Path) -> Iterator[TmuxBed]:
    bed = TmuxBed(root)
    try:
        yield bed
    finally:
        bed.close()
