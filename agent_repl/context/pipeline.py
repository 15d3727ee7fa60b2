"""The context pipeline (docs/architecture.md 5): one list, cheapest step first.

    boundary slice -> tool-result budget -> snip -> microcompact -> collapse -> autocompact
        -> normalization for the API -> blocking check -> the wire

Each stage gets the view the one before it returned; one that is not needed returns it
unchanged, so the destructive stages late in the list rarely run. The two checks return what the
loop must do before it sends: `Compact("auto")` or `Block(message)`. Each step's module holds all
of it (its view change, its marks on the wire, its reaction to the API's usage); how a step is
run is agent_repl.context.projector, how to add one is this package's README.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, Self

from agent_repl.context.autocompact import Autocompact
from agent_repl.context.blocking import BlockingLimit
from agent_repl.context.boundary import BoundarySlice
from agent_repl.context.budget import ToolResultBudget
from agent_repl.context.collapse import CollapseStage
from agent_repl.context.compactor import Compactor
from agent_repl.context.context_session import ContextSession
from agent_repl.context.microcompact import Microcompact
from agent_repl.context.projector import Pipeline
from agent_repl.context.snip import SnipSession, SnipStage, install_snip
from agent_repl.context.stage import Check, Stage
from agent_repl.context.state import PipelineConfig, PipelineState
from agent_repl.core.loop.turn_session import Compaction


def flowchart(tool_results_dir: Path) -> list[Stage | Check]:
    return [
        BoundarySlice(),  # the last compact boundary onward; snipped and undone entries out
        ToolResultBudget(tool_results_dir),  # large results become <persisted-output> previews
        SnipStage(),  # snip-safe spans leave the view (when no summary manages it)
        Microcompact(),  # old tool results cleared, or deleted from the cache by cache edits
        CollapseStage(),  # committed spans read as one <collapsed> summary each
        Autocompact(),  # over the threshold: Compact("auto")
        # normalization for the API runs here: the checks after it see the finished request
        BlockingLimit(),  # over the blocking limit with autocompact off: Block(message)
    ]


def context_pipeline(config: PipelineConfig, tool_results_dir: Path) -> Pipeline:
    """A session's pipeline (the main thread's or a sub-agent's)."""
    return Pipeline(flowchart(tool_results_dir), PipelineState(config=config))


class PipelineSession(ContextSession, SnipSession, Protocol):
    compactor: Compaction[Self] | None


def attach(session: PipelineSession, pipeline: Pipeline) -> None:
    """Give a session what runs beside its pipeline: the compactor and the Snip tool's port."""
    session.compactor = Compactor(pipeline)
    install_snip(session, pipeline)
