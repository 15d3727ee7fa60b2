"""A local Anthropic Messages API emulator: the offline model, the test bed and the cost meter.

Start it in-process with `EmulatorServer` (see `server.py`) or from a shell with
`python -m agent_repl.emulator`. The agent core never imports this package.
"""

from __future__ import annotations

from typing import Any

__all__ = ["AdjustableClock", "EmulatorServer", "FaultPlan"]


def __getattr__(name: str) -> Any:
    # Lazy, so importing a small module of the package (models, tokens) does not load uvicorn.
    if name in ("AdjustableClock", "EmulatorServer"):
        from agent_repl.emulator import server

        return getattr(server, name)
    if name == "FaultPlan":
        from agent_repl.emulator.faults import FaultPlan

        return FaultPlan
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
