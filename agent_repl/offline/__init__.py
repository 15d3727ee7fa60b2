"""Offline mode: with no API key, the agent talks to the local emulator's demo model.

The emulator is a generic stand-in for the Messages API; what understands the agent's own
requests lives here: the demo model, and the summarizer that writes the agent's nine-section
summaries. Only the CLI imports this package; the agent core never imports the emulator. The
emulator's server (starlette, uvicorn) is the `emulator` extra, so it is imported only when
offline mode starts.
"""

from __future__ import annotations

from contextlib import ExitStack

# The emulator's server packages (the `emulator` extra).
SERVER_PACKAGES = frozenset({"starlette", "uvicorn"})


class OfflineModeUnavailable(RuntimeError):
    """The emulator's server packages are not installed."""


def start_offline_emulator(stack: ExitStack) -> str:
    """Start the emulator with the demo policy and the agent's summarizer on a free loopback port;
    it stops with `stack`. (A model it does not know is refused when the command line checks
    `--model` against it.)"""
    try:
        from agent_repl.emulator.recording import RecordLimit
        from agent_repl.emulator.server import EmulatorServer
        from agent_repl.offline.demo import DemoPolicy
        from agent_repl.offline.summary import AgentSummarizer
    except ModuleNotFoundError as exc:
        if exc.name not in SERVER_PACKAGES:
            raise
        raise OfflineModeUnavailable(
            f"offline mode needs the emulator's server, and {exc.name} is not installed: "
            "install agent-repl[emulator], or set ANTHROPIC_API_KEY to talk to Claude"
        ) from None
    # Nobody reads the demo's recordings; keep just enough to debug the last few requests.
    limit = RecordLimit(exchanges=20, bytes=8 * 1024 * 1024)
    server = EmulatorServer(policy=DemoPolicy(), summarizer=AgentSummarizer(), record_limit=limit)
    stack.enter_context(server)
    return server.base_url
