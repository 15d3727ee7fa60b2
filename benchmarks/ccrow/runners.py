"""One run: a session, an agent, a window and a summary condition, against the emulator.

Both agents run their real tools over the same copy of a real source tree, from the same working
directory, and talk to one emulator each (the model: `RowPolicy`; the meter: `RowEngine`).

- Claude Code: the installed `claude` CLI as a black box, one process per session in print mode
  with streamed JSON input (one user message per turn, the next sent once the turn's result
  arrives), a fresh HOME, a fake key, `--dangerously-skip-permissions` (IS_SANDBOX=1 as root), and
  `--autocompact WINDOW`, the CLI's own flag for the window it compacts in.
- agent-repl: its real session and loop in this process (`open_session`, its built-in tools),
  with `context_window` set to the window.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.config.settings import load_settings
from agent_repl.core.model.events import TurnEnded
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies.summary import Summarizer
from agent_repl.emulator.recording import RecordLimit
from agent_repl.emulator.server import EmulatorServer
from benchmarks.ccrow.levers import DEFAULTS, Lever
from benchmarks.ccrow.measure import (
    Compaction,
    CompactionWatch,
    Progress,
    RowEngine,
    cost_by_kind,
    kinds,
    main_parts,
)
from benchmarks.ccrow.policy import Client, RowPolicy, classify
from benchmarks.ccrow.sessions import Session
from benchmarks.replay.metrics import cost_units

MODEL = "claude-sonnet-5-5"
TURN_TIMEOUT = 300.0


@dataclass
class RowResult:
    session: str
    agent: str
    window: int
    condition: str
    cost_units: float = 0.0
    usd: float = 0.0
    requests: dict[str, int] = field(default_factory=dict)
    cost_by_kind: dict[str, float] = field(default_factory=dict)
    overflows: int = 0
    compactions: list[Compaction] = field(default_factory=list)
    rewrites: int = 0
    first_context: int = 0
    tool_output: int = 0  # tokens of the tool results, each counted once
    # The main requests' cost in units: cache writes, cache reads, uncached input, output.
    main_parts: dict[str, float] = field(default_factory=dict)
    # The agent's own count: compact boundaries in its transcript (Claude Code) or its session.
    own_compactions: int | None = None
    turns_done: int = 0
    turns: int = 0
    note: str = ""
    wall_seconds: float = 0.0

    @property
    def completed(self) -> bool:
        return self.turns_done == self.turns and not self.note


@dataclass
class Bench:
    """The emulator for one run, and what it records."""

    session: Session
    client: Client
    window: int
    summarizer: Summarizer
    progress: Progress = field(default_factory=Progress)

    def __post_init__(self) -> None:
        models = default_model_table()
        self.watch = CompactionWatch(self.session, self.progress)
        prompts = self.session.prompts
        self.policy = RowPolicy(self.session.scenario(), lambda body: classify(body, self.client, prompts))
        self.engine = RowEngine(
            models,
            self.policy,
            clock=time.time,
            context_window=self.window,
            summarizer=self.summarizer,
            client=self.client,
            watch=self.watch,
        )
        self.server = EmulatorServer(
            engine=self.engine, models=models, record_limit=RecordLimit(exchanges=2, bytes=1)
        )

    def steps_through(self, turns: int) -> int:
        return sum(len(turn.steps) for turn in self.session.turns[:turns])

    def result(self, agent: str, condition: str, started: float) -> RowResult:
        totals = self.engine.usage_totals()
        spec = self.engine.resolve(MODEL)
        units = cost_units(totals, spec)
        return RowResult(
            session=self.session.name,
            agent=agent,
            window=self.window,
            condition=condition,
            cost_units=units,
            usd=units * spec.input_usd_per_mtok / 1_000_000,
            requests=kinds(self.engine.log),
            cost_by_kind=cost_by_kind(self.engine.log, spec),
            overflows=sum(1 for entry in self.engine.log if entry.overflow),
            compactions=list(self.watch.compactions),
            rewrites=self.watch.rewrites,
            first_context=self.watch.first,
            tool_output=sum(self.watch.tool_output.values()),
            main_parts=main_parts(self.engine.log, spec),
            turns=len(self.session.turns),
            wall_seconds=time.perf_counter() - started,
        )


def claude_command(window: int) -> list[str]:
    return [
        "claude",
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        MODEL,
        "--dangerously-skip-permissions",
        "--autocompact",
        str(window),
    ]


def claude_env(base_url: str, home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-emulator",
        "IS_SANDBOX": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def user_line(prompt: str) -> str:
    message = {
        "type": "user",
        "message": {"role": "user", "content": prompt},
        "parent_tool_use_id": None,
        "session_id": "default",
    }
    return json.dumps(message) + "\n"


def _read_result(process: subprocess.Popen[str], deadline: float) -> dict[str, Any] | None:
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            return None
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("type") == "result":
            return event
    return None


def transcript_boundaries(home: Path) -> int:
    """Compact boundary records in the session files Claude Code wrote under `home` (a record
    with `subtype` "compact_boundary", the field its 2.1.3xx transcripts carry)."""
    count = 0
    for path in home.glob(".claude/projects/*/*.jsonl"):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            count += isinstance(record, dict) and record.get("subtype") == "compact_boundary"
    return count


def session_boundaries(agent: Any) -> int:
    undone = agent.projector.state.compaction.undone
    return sum(
        1
        for m in agent.messages
        if m.type == "system" and getattr(m, "subtype", "") == "compact_boundary" and m.uuid not in undone
    )


def run_claude_code(
    session: Session, cwd: Path, window: int, summarizer: Summarizer, condition: str
) -> RowResult:
    started = time.perf_counter()
    bench = Bench(session, "claude-code", window, summarizer)
    home = Path(tempfile.mkdtemp(prefix="ccrow-home-"))
    bench.server.start()
    process = subprocess.Popen(
        claude_command(window),
        cwd=cwd,
        env=claude_env(bench.server.base_url, home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    done, note = 0, ""
    try:
        assert process.stdin is not None
        for index, turn in enumerate(session.turns):
            bench.progress.sent = index + 1
            process.stdin.write(user_line(turn.prompt))
            process.stdin.flush()
            event = _read_result(process, time.monotonic() + TURN_TIMEOUT)
            if event is None or event.get("is_error"):
                note = "no result" if event is None else f"error: {str(event.get('result'))[:120]}"
                break
            if bench.policy.cursor != bench.steps_through(index + 1):
                note = f"script out of step after turn {index + 1} ({bench.policy.cursor} steps)"
                break
            done = index + 1
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        bench.server.stop()
        own = transcript_boundaries(home)
        shutil.rmtree(home, ignore_errors=True)
    result = bench.result("claude-code", condition, started)
    result.turns_done, result.note, result.own_compactions = done, note, own
    return result


async def run_agent_repl(
    session: Session, cwd: Path, window: int, summarizer: Summarizer, condition: str, lever: Lever = DEFAULTS
) -> RowResult:
    started = time.perf_counter()
    bench = Bench(session, "agent-repl", window, summarizer)
    home = Path(tempfile.mkdtemp(prefix="ccrow-ar-home-"))
    bench.server.start()
    env = {
        "AGENT_REPL_HOME": str(home),
        "ANTHROPIC_BASE_URL": bench.server.base_url,
        "ANTHROPIC_API_KEY": "emulator",
    }
    settings = load_settings(
        cwd=cwd, env=env, overrides={"skip_permissions": True, "context_window": window, "model": MODEL}
    )
    agent = await open_session(settings, cwd, tools=lever.tools() if lever.tools else None)
    if lever.configure is not None:
        lever.configure(agent)
    done, note = 0, ""
    try:
        for index, turn in enumerate(session.turns):
            await agent.ensure_started()
            bench.progress.sent = index + 1
            ended = [e async for e in agent.run_turn(turn.prompt) if isinstance(e, TurnEnded)]
            reason = ended[-1].reason if ended else "no end"
            if reason != "completed":
                note = f"turn {index + 1} ended: {reason}"
                break
            if bench.policy.cursor != bench.steps_through(index + 1):
                note = f"script out of step after turn {index + 1} ({bench.policy.cursor} steps)"
                break
            done = index + 1
            if agent.memory is not None:
                await agent.memory.wait_for_extraction(timeout=120)
    finally:
        own = session_boundaries(agent)
        await close_session(agent)
        bench.server.stop()
        shutil.rmtree(home, ignore_errors=True)
    result = bench.result(lever.name, condition, started)
    result.turns_done, result.note, result.own_compactions = done, note, own
    return result


def claude_version() -> str | None:
    """The installed CLI's version line, or None when `claude` is not on PATH."""
    if shutil.which("claude") is None:
        return None
    out = subprocess.run(
        ["claude", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": tempfile.gettempdir()},
    )
    return out.stdout.strip().removesuffix("(Claude Code)").strip() or None
