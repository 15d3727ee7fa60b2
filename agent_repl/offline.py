"""Offline mode: with no API key, the agent talks to the local emulator's demo model.

Only the CLI imports this module; the agent core never imports the emulator.
"""

from __future__ import annotations

from contextlib import ExitStack

from agent_repl.emulator.policies import DemoPolicy
from agent_repl.emulator.recording import RecordLimit
from agent_repl.emulator.server import EmulatorServer

# Nobody reads the demo's recordings; keep just enough to debug the last few requests.
OFFLINE_RECORD_LIMIT = RecordLimit(exchanges=20, bytes=8 * 1024 * 1024)


def start_offline_emulator(stack: ExitStack) -> str:
    """Start the emulator with the demo policy on a free loopback port; it stops with `stack`.
    (A model it does not know is refused when the command line checks `--model` against it.)"""
    server = EmulatorServer(policy=DemoPolicy(), record_limit=OFFLINE_RECORD_LIMIT)
    stack.enter_context(server)
    return server.base_url
