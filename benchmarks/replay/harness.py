"""One replay: a trajectory, a strategy and a window, run through the real session and loop.

The emulator is the model (the script policy answers with the trajectory's steps, the summary
summarizer of the run's summary condition answers compaction and memory requests, see
summarizers.py) and the meter. The session is the one
`open_session` builds, with replay tools instead of ours, then configured by the strategy. Each
turn sends the trajectory's user messages; between turns the harness waits for background work
(session memory) to finish, as a person typing the next prompt would. A turn that ends in an
error (a prompt too long that nothing recovered) stops the run there: the rest of the script
would no longer line up with the conversation.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import random
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.config.settings import load_settings
from agent_repl.core.model.events import TurnEnded
from agent_repl.core.model.messages import UserMessage
from agent_repl.emulator.models import ModelSpec, default_model_table
from agent_repl.emulator.policies import PolicyRequest, Reply, ScriptPolicy
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.recording import RecordLimit
from agent_repl.emulator.server import EmulatorServer
from benchmarks.replay.meter import PAUSE_SECONDS, MeteredEngine
from benchmarks.replay.metrics import (
    RunResult,
    cache_read_share,
    cost_units,
    is_prefix_rewrite,
    retention,
    retention_point,
    todo_items,
    usage_input,
    view_text,
)
from benchmarks.replay.replay_tools import replay_tools
from benchmarks.replay.stages import DropOldestRounds
from benchmarks.replay.strategies import PeerCompaction, Strategy
from benchmarks.replay.summarizers import DEFAULT_CONDITION, summarizer_for
from benchmarks.replay.timeline import GapSamples, Pauses, SimClock, with_times
from benchmarks.replay.trajectory import Trajectory, UserText, paths_in_call

MODEL = "claude-sonnet-5-5"
# Sonnet 5.5's cache-read price relative to input: the reference gives 0.1 or 0.05; 0.1 is the
# emulator's default and the one most sources list.
DEFAULT_READ_MULTIPLIER = 0.1


@dataclass
class RetentionProbe:
    """What the view holds at the first main request after each compaction, and at the request
    that asks for the planted needles. `count` reads the strategy's compactions so far (the
    session waits on the request meanwhile, so its history holds still)."""

    trajectory: Trajectory
    users_sent: list[str]
    count: Callable[[], int] = lambda: 0
    seen: int = 0
    asking: bool = False
    points: list[dict[str, Any]] = field(default_factory=list)
    at_question: list[int] = field(default_factory=lambda: [0, 0])

    def sent_needles(self) -> list[str]:
        return [n for n in self.trajectory.needles if any(n in text for text in self.users_sent)]

    def main_request(self, body: dict[str, Any], index: int, steps_done: int) -> None:
        compactions = self.count()
        if self.asking and self.trajectory.needles:
            self.asking = False
            self.at_question = list(retention(self.sent_needles(), view_text(body.get("messages", []))))
        if compactions <= self.seen:
            return
        self.seen = compactions
        steps = self.trajectory.steps_before(steps_done)
        files = list(dict.fromkeys(p for step in steps for call in step.tools for p in paths_in_call(call)))
        measured = {"users": self.users_sent, "files": files, "todos": todo_items(steps), "needles": self.sent_needles()}
        point: dict[str, Any] = {"request": index, **retention_point(view_text(body.get("messages", [])), measured)}
        self.points.append(point)


class WatchingPolicy(ScriptPolicy):
    """The script policy, keeping the last main request as the model saw it and moving the clock
    by each step's model latency as it answers."""

    def __init__(self, scenario: dict[str, Any], clock: SimClock, latencies: list[float]) -> None:
        super().__init__(scenario)
        self.clock = clock
        self.latencies = latencies
        self.last_main_body: dict[str, Any] | None = None
        self.probe: RetentionProbe | None = None

    def reply(self, request: PolicyRequest) -> Reply:
        if request_kind(request.body) is None:
            self.last_main_body = request.body
            if self.probe is not None:
                self.probe.main_request(request.body, request.request_index, self.cursor)
            if self.cursor < len(self.latencies):
                self.clock.advance(self.latencies[self.cursor])
        return super().reply(request)


class ProjectionTimer:
    """Wraps the projector: CPU time of this thread (the emulator runs in another) per real projection."""

    def __init__(self, projector: Any) -> None:
        self.projector = projector
        self.seconds = 0.0
        self.count = 0
        self._project = projector.project
        projector.project = self.project

    def project(self, history: list[Any], *, dry_run: bool = False) -> Any:
        if dry_run:
            return self._project(history, dry_run=True)
        started = time.thread_time()
        try:
            return self._project(history)
        finally:
            self.seconds += time.thread_time() - started
            self.count += 1


@contextmanager
def seeded_uuids(seed: str) -> Iterator[None]:
    """uuid4 from a generator seeded by the run, for agent-repl's own calls, so message ids (and
    so the `[id:]` tags the model sees and the tokenizer counts), the session id and its paths
    repeat from run to run. Other callers (the SDK, lazy imports, the emulator's thread) keep
    the real uuid4: how often they draw is not the same from run to run."""
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    original = uuid.uuid4

    def uuid4() -> uuid.UUID:
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.startswith("agent_repl."):
            return uuid.UUID(int=rng.getrandbits(128), version=4)
        return original()

    uuid.uuid4 = uuid4  # type: ignore[assignment]
    try:
        yield
    finally:
        uuid.uuid4 = original  # type: ignore[assignment]


@contextmanager
def run_home(seed: str) -> Iterator[Path]:
    """A fresh home for one run, named by the run: its name is in paths the model sees (the
    `<persisted-output>` previews), so a random one would move token counts from run to run. A
    lock keeps two benchmark processes on this machine from sharing it."""
    root = Path(tempfile.gettempdir()) / "agent-repl-replay"
    root.mkdir(parents=True, exist_ok=True)
    name = f"home-{hashlib.sha256(seed.encode()).hexdigest()[:8]}"
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        home = root / name
        shutil.rmtree(home, ignore_errors=True)
        try:
            yield home
        finally:
            shutil.rmtree(home, ignore_errors=True)


def project_dir() -> Path:
    """The same working directory for every run, so every run has the same system prompt."""
    path = Path(tempfile.gettempdir()) / "agent-repl-replay" / "project"
    path.mkdir(parents=True, exist_ok=True)
    return path


def model_table(read_multiplier: float) -> dict[str, ModelSpec]:
    """The emulator's models with the default model's cache-read multiplier as given (the
    reference calls Sonnet 5.5's uncertain: 0.1 or 0.05)."""
    table = default_model_table()
    return {name: replace(spec, cache_read_multiplier=read_multiplier) if spec.id == MODEL else spec for name, spec in table.items()}


def split_prompt(user: list[UserText]) -> tuple[list[UserText], str]:
    """(the messages to add before the turn, the prompt the turn opens with). The prompt is the
    turn's last typed message: a client-injected text after it (a skill's body, which Claude Code
    records as meta) goes before it as meta, as it would never be typed."""
    if not user:
        return [], "Continue."
    last = max((i for i, u in enumerate(user) if not u.is_meta), default=len(user) - 1)
    return [u for i, u in enumerate(user) if i != last], user[last].text


async def run_one(
    trajectory: Trajectory,
    strategy: Strategy,
    window: int,
    *,
    pauses: Pauses | None = None,
    read_multiplier: float = DEFAULT_READ_MULTIPLIER,
    summaries: str = DEFAULT_CONDITION,
) -> RunResult:
    """One run. `summaries`: who writes the summaries (`summarizers.summarizer_for`). The seed, and
    so every id and path, is the same under every summary condition."""
    condition = "pauses" if pauses is not None else "measured"
    seed = f"{trajectory.name}/{strategy.name}/{window}/{condition}"
    with seeded_uuids(seed), run_home(seed) as home:
        timed = with_times(trajectory, GapSamples.load(), pauses)
        result = await _run_one(timed, strategy, window, model_table(read_multiplier), home, summaries)
    result.condition = condition
    result.summaries = summaries
    return result


async def _run_one(
    trajectory: Trajectory,
    strategy: Strategy,
    window: int,
    models: dict[str, ModelSpec],
    home: Path,
    summaries: str = DEFAULT_CONDITION,
) -> RunResult:
    started = time.perf_counter()
    scenario = trajectory.scenario()
    clock = SimClock()
    steps = [step for turn in trajectory.turns for step in turn.steps]
    policy = WatchingPolicy(scenario, clock, [step.model_seconds or 0.0 for step in steps])
    engine = MeteredEngine(
        models,
        policy,
        clock=clock,
        context_window=window,
        cache_editing=strategy.cache_editing_endpoint,
        summarizer=summarizer_for(summaries),
    )
    server = EmulatorServer(engine=engine, models=models, clock=clock, record_limit=RecordLimit(exchanges=2, bytes=1))
    server.start()
    cwd = project_dir()
    env = {"AGENT_REPL_HOME": str(home), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "replay"}
    settings = load_settings(cwd=cwd, env=env, overrides={"skip_permissions": True, "context_window": window})
    result = RunResult(trajectory.name, strategy.name, window, trajectory.request_count)
    session = await open_session(settings, cwd, clock=clock.now, tools=replay_tools(trajectory, scenario, clock))
    handle = strategy.configure(session)
    timer = ProjectionTimer(session.projector)
    users_sent: list[str] = []
    probe = policy.probe = RetentionProbe(trajectory, users_sent, lambda: _compactions(session, handle))
    typed = set(trajectory.typed_user_messages())
    expected_steps = 0
    try:
        for number, turn in enumerate(trajectory.turns, 1):
            probe.asking = number == len(trajectory.turns)
            await session.ensure_started()
            clock.advance(turn.think_seconds or 0.0)
            extras, prompt = split_prompt(turn.user)
            for extra in extras:
                await session.append(UserMessage(content=extra.text, is_meta=extra.is_meta))
            users_sent += [u.text for u in turn.user if u.text in typed]
            ended = [e async for e in session.run_turn(prompt) if isinstance(e, TurnEnded)]
            expected_steps += len(turn.steps)
            reason = ended[-1].reason if ended else "no end"
            if reason != "completed" or policy.cursor != expected_steps:
                # A refused request, or a reply the window cut short: the script no longer lines up.
                result.stopped_at = sum(1 for r in engine.log if r.kind == "main" and not r.overflow) + 1
                why = "a reply was cut at the window's edge" if reason == "completed" else f"the turn ended: {reason}"
                result.stop_reason = f"{why} (script step {policy.cursor} of {expected_steps})"
                break
            if session.memory is not None:
                await session.memory.wait_for_extraction(timeout=120)
        _collect(result, engine, policy, session, handle, timer, trajectory, users_sent)
        _after_compactions(result, engine, probe)
        result.sim_minutes = clock.elapsed / 60
    finally:
        await close_session(session)
        server.stop()
        result.records = record_counts(home)
    result.wall_seconds = time.perf_counter() - started
    return result


def _collect(
    result: RunResult,
    engine: MeteredEngine,
    policy: WatchingPolicy,
    session: Any,
    handle: Any,
    timer: ProjectionTimer,
    trajectory: Trajectory,
    users_sent: list[str],
) -> None:
    for entry in engine.log:
        if entry.overflow:
            result.overflow_errors += 1
            continue
        if entry.usage is None:
            continue
        tokens = usage_input(entry.usage)
        result.output_by_kind[entry.kind] = result.output_by_kind.get(entry.kind, 0) + entry.output_tokens
        result.peak_input = max(result.peak_input, tokens)
        if entry.kind == "main":
            result.main_requests += 1
            result.input_series.append(tokens)
            result.prefix_rewrites += result.main_requests > 1 and is_prefix_rewrite(entry.usage)
            if entry.gap is not None and entry.gap > PAUSE_SECONDS:
                result.pauses += 1
                result.pause_rewrites += entry.written > tokens / 2
        elif entry.kind == "summary":
            result.summary_calls += 1
        else:
            result.memory_calls += 1
    totals = engine.usage_totals()
    spec = engine.resolve(session.model)
    result.totals = {k: v for k, v in totals.items() if k != "by_model"}
    result.cost_units = cost_units(totals, spec)
    result.usd = result.cost_units * spec.input_usd_per_mtok / 1_000_000
    result.cache_read_share = cache_read_share(totals)
    result.thinking_written = sum(engine.thinking.written.values())
    result.thinking_dropped = sum(engine.thinking.dropped.values())
    result.compactions = _compactions(session, handle)
    if isinstance(handle, PeerCompaction) and handle.errors:
        result.records["compaction-error"] = len(handle.errors)
        result.stop_reason = result.stop_reason or handle.errors[0]
    result.estimate_errors = list(session.projector.state.tokens.errors)
    result.pipeline_cpu_seconds, result.projections = timer.seconds, timer.count
    final_view = view_text((policy.last_main_body or {}).get("messages", []))
    result.users_kept, result.users_total = retention(users_sent, final_view)
    files = _files_touched(trajectory, result.main_requests)
    result.files_kept, result.files_total = retention(files, final_view)


def _after_compactions(result: RunResult, engine: MeteredEngine, probe: RetentionProbe) -> None:
    """The probe's points with the tokens of their requests, above the run's first main prompt."""
    tokens = {e.index: e.total_tokens for e in engine.log if e.kind == "main" and not e.overflow}
    base = next(iter(tokens.values()), 0)
    for point in probe.points:
        size = tokens.get(point["request"], 0)
        result.after_compaction.append({**point, "tokens": size, "above_base": size - base})
    result.needles_at_question = probe.at_question


def record_counts(home: Path) -> dict[str, int]:
    """Side records (not messages) in the session's transcript, by type."""
    counts: dict[str, int] = {}
    for path in home.glob("projects/*/*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            kind = json.loads(line).get("type", "") if line.strip() else ""
            if kind not in ("user", "assistant", "system", "message", ""):
                counts[kind] = counts.get(kind, 0) + 1
    return counts


def _compactions(session: Any, handle: Any) -> int:
    if isinstance(handle, PeerCompaction):
        return handle.compactions
    if isinstance(handle, DropOldestRounds):
        return handle.drops
    undone = session.projector.state.compaction.undone
    return sum(
        1
        for m in session.messages
        if m.type == "system" and getattr(m, "subtype", "") == "compact_boundary" and m.uuid not in undone
    )


def _files_touched(trajectory: Trajectory, steps_done: int) -> list[str]:
    """Paths the calls of the first `steps_done` steps named (all of them for a finished run)."""
    partial = trajectory.model_copy(deep=True)
    remaining = steps_done
    for turn in partial.turns:
        kept = turn.steps[:remaining]
        remaining -= len(kept)
        turn.steps = kept
    return partial.touched_files()
