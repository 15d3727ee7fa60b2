"""The strategies compared, each a configuration of one real session (see README.md for sources).

`agent-repl` is the session `open_session` builds. Every other strategy starts from it and
strips the pipeline to `BoundarySlice` (the history view) plus normalization, turns off what
only our endpoint offers (cache editing, session memory), and adds its own small stage or
compactor. A compactor's trigger is a check at the end of the pipeline and its compaction the
session's `Compaction`, so the real query loop asks it before every request whether to compact,
and asks it once more after a prompt-too-long error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from agent_repl.context.compact import CompactionOutcome
from agent_repl.context.stage import Check
from agent_repl.context.state import PipelineState
from agent_repl.core.api.failures import CompactTrigger
from agent_repl.core.api.request import place_message_breakpoints
from agent_repl.core.loop.projection import Compact
from benchmarks.replay.compactors import CodexCompactor, GeminiCompactor, OpenCodeCompactor
from benchmarks.replay.stages import DropOldestRounds, ResultReplacements

if TYPE_CHECKING:
    from agent_repl.session import Session


class Compactor(Protocol):
    name: str

    def wants(self, session: Session, tokens: int) -> bool: ...

    async def compact(self, session: Session, trigger: CompactTrigger) -> CompactionOutcome: ...


class PeerTrigger(Check):
    """A peer's autocompact check: its compactor decides (the peers have no blocking limit)."""

    name = "peer autocompact"

    def __init__(self, session: Session, compactor: Compactor) -> None:
        self.session = session
        self.compactor = compactor

    def check(self, tokens: int, state: PipelineState) -> Compact | None:
        return Compact("auto") if self.compactor.wants(self.session, tokens) else None


class PeerCompaction:
    """The session's `Compaction` for a peer: its compactor summarizes."""

    def __init__(self, compactor: Compactor) -> None:
        self.compactor = compactor
        self.compactions = 0
        # Exceptions a compaction raised (a harness bug would show here, not as a quiet no-op).
        self.errors: list[str] = []

    async def compact(
        self, session: Session, *, trigger: CompactTrigger, instructions: str | None = None, byte_budget: int | None = None
    ) -> Any:
        try:
            outcome = await self.compactor.compact(session, trigger)
        except Exception as exc:  # a failed compaction leaves the view as it was, as in the peers
            outcome = CompactionOutcome(False, trigger, f"{self.compactor.name}: failed: {exc!r}", 0)
            self.errors.append(outcome.message)
        self.compactions += outcome.ok
        return outcome

    def breaker_just_opened(self) -> bool:
        return False

    def due_between_turns(self, session: Session, view: list[Any], tokens: int) -> bool:
        return False  # a peer compacts at its own threshold only


class OneBreakpointClient:
    """`naive`: the request as built, but with a single cache breakpoint that moves with the end
    of the conversation (none on the system prompt or the tools)."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def stream(self, body: dict[str, Any], **kwargs: Any) -> Any:
        return self._client.stream(one_breakpoint(body), **kwargs)


def _without_markers(blocks: Any) -> Any:
    if not isinstance(blocks, list):
        return blocks
    return [{k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b for b in blocks]


def one_breakpoint(body: dict[str, Any]) -> dict[str, Any]:
    messages = [{**m, "content": _without_markers(m["content"])} for m in body.get("messages", [])]
    stripped = {**body, "system": _without_markers(body.get("system")), "messages": messages}
    if "tools" in body:
        stripped["tools"] = _without_markers(body["tools"])
    stripped["messages"] = place_message_breakpoints(messages, count=1)
    return stripped


def strip_to_boundary_slice(session: Session) -> None:
    """The peers' common base: the history view and normalization, no product-only features."""
    session.projector.stages = session.projector.stages[:1]  # type: ignore[attr-defined]
    session.capabilities_checked = True  # so the endpoint's cache-editing beta is never turned on
    session.after_turn_hooks.clear()
    session.memory = None
    session.compactor = None


MEASURED, PAUSES = "measured", "pauses"
ALL_WINDOWS = (50_000, 200_000, 1_000_000)
# The pauses condition runs at 200K, where the defaults neither compact often (as at 50K) nor
# carry a long session uncompacted (as at 1M); it keeps the benchmark within its time budget.
PAUSE_WINDOWS = (200_000,)


@dataclass(frozen=True)
class Strategy:
    name: str
    configure: Callable[[Session], Any]
    # The emulator is the public API unless a strategy asks for more (our cache-editing beta).
    cache_editing_endpoint: bool = False
    # Where it runs: under which time conditions and at which windows (a lever runs only where it
    # can act, so the whole benchmark fits its time budget).
    conditions: tuple[str, ...] = (MEASURED,)
    windows: tuple[int, ...] = ALL_WINDOWS

    def runs_in(self, condition: str, window: int) -> bool:
        if condition == PAUSES and window not in PAUSE_WINDOWS:
            return False
        return condition in self.conditions and window in self.windows


def _naive(session: Session) -> None:
    strip_to_boundary_slice(session)
    session.client = OneBreakpointClient(session.client)  # type: ignore[assignment]


def _with_compactor(make: Callable[[ResultReplacements], Compactor]) -> Callable[[Session], PeerCompaction]:
    def configure(session: Session) -> PeerCompaction:
        strip_to_boundary_slice(session)
        replacements = ResultReplacements()
        compactor = make(replacements)
        session.projector.stages += [replacements, PeerTrigger(session, compactor)]  # type: ignore[attr-defined]
        if isinstance(compactor, OpenCodeCompactor):
            session.after_turn_hooks.append(compactor.prune)
        compaction = PeerCompaction(compactor)
        session.compactor = compaction  # type: ignore[assignment]
        return compaction

    return configure


def _truncate(session: Session) -> DropOldestRounds:
    strip_to_boundary_slice(session)
    stage = DropOldestRounds()
    session.projector.stages.append(stage)  # type: ignore[attr-defined]
    return stage


def _agent_repl_variant(*, memory: bool = True, **config: object) -> Callable[[Session], None]:
    """A variant of the defaults (a lever alone, or a part turned off), to measure what it costs or
    saves: each keyword is a `PipelineConfig` field set on the session's pipeline."""

    def configure(session: Session) -> None:
        pipeline_config = session.projector.state.config  # type: ignore[attr-defined]
        for name, value in config.items():
            assert hasattr(pipeline_config, name), name
            setattr(pipeline_config, name, value)
        if not memory:
            session.after_turn_hooks.clear()
            session.memory = None

    return configure


BOTH = (MEASURED, PAUSES)
COMPACTING = (50_000, 200_000)  # where the defaults compact at the threshold
COST_TRIGGERED = (200_000, 1_000_000)  # where the defaults also compact when it pays


STRATEGIES: list[Strategy] = [
    Strategy("agent-repl", lambda session: None, conditions=BOTH),
    Strategy("naive", _naive, conditions=BOTH),
    Strategy("codex-style", _with_compactor(lambda _: CodexCompactor())),
    Strategy("gemini-style", _with_compactor(GeminiCompactor)),
    Strategy("opencode-style", _with_compactor(OpenCodeCompactor)),
    Strategy("truncate", _truncate),
]


def _lever(name: str, *, conditions: tuple[str, ...] = (MEASURED,), windows: tuple[int, ...], **config: object) -> Strategy:
    return Strategy(f"agent-repl {name}", _agent_repl_variant(**config), conditions=conditions, windows=windows)


# Not compared with the peers: each changes one setting of agent-repl (a lever alone), where it
# can act, to show what it costs or saves; the measured gaps have no pause, so the levers about
# time run under the pauses condition.
DIAGNOSTIC_VARIANTS: list[Strategy] = [
    _lever("with its own summary", windows=ALL_WINDOWS, on_demand_compaction=False),
    _lever("with the earlier kept tail", windows=COMPACTING, kept_tail_tokens=40_000, reinject_share=0.1),
    # By the window it starts at: the session sets the window (and `cost_trigger` from it) after
    # the strategy configured it, so setting `cost_trigger` itself changed nothing.
    _lever("without the cost-aware trigger", windows=COST_TRIGGERED, cost_trigger_min_window=0),
    _lever("with the cost-aware trigger", windows=(50_000,), cost_trigger_min_window=50_000),
    _lever("compacting whenever it pays", windows=COST_TRIGGERED, cost_trigger_margin=1.0),
    _lever("with the cost trigger's margin at 5", windows=COST_TRIGGERED, cost_trigger_margin=5.0),
    _lever("without the file list", windows=ALL_WINDOWS, list_touched_files=False),
    _lever("without session memory", windows=(200_000,), memory=False),
    _lever("with server clears", conditions=BOTH, windows=(200_000,), server_clear=True),
    _lever("with 1h cache", conditions=(PAUSES,), windows=PAUSE_WINDOWS, cache_ttl="1h"),
    _lever("with a 1h prefix", conditions=(PAUSES,), windows=PAUSE_WINDOWS, cache_ttl="prefix-1h"),
    _lever("with 1h cache after a pause", conditions=(PAUSES,), windows=PAUSE_WINDOWS, cache_ttl="auto"),
    _lever("without clears at expiry", conditions=BOTH, windows=PAUSE_WINDOWS, clear_at_expiry=False),
    # Cache editing is our emulator's beta, not the public API's: what it would save.
    Strategy(
        "agent-repl with cache editing (not public)",
        _agent_repl_variant(),
        cache_editing_endpoint=True,
        windows=(200_000,),
    ),
]
