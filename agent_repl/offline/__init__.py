"""Offline mode: with no API key, the agent talks to the local emulator's demo model.

The emulator is a generic stand-in for the Messages API; what understands the agent's own
requests lives here: the demo model, and the summarizer that writes the agent's nine-section
summaries. Only the CLI imports this package; the agent core never imports the emulator. The
emulator's server (starlette, uvicorn) is the `emulator` extra.

The emulator runs in a process of its own (`python -m agent_repl.offline --inherit-fd N`), started
while the agent is still starting up, so its imports take the other core rather than the agent's
time: the agent binds the loopback socket itself and hands it over, so the URL is known at once and
a request sent before the emulator is ready waits in the socket's backlog. It quits when the
agent closes its stdin (on exit, or when the agent dies).
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
from contextlib import ExitStack

# The emulator's server packages (the `emulator` extra).
SERVER_PACKAGES = frozenset({"starlette", "uvicorn"})
# Nobody reads the demo's recordings; keep just enough to debug the last few requests.
_RECORD_LIMIT = ("--max-recorded", "20", "--max-recorded-bytes", str(8 * 1024 * 1024))


class OfflineModeUnavailable(RuntimeError):
    """The emulator's server packages are not installed."""


def start_offline_emulator(stack: ExitStack) -> str:
    """Start the emulator with the demo policy and the agent's summarizer on a free loopback port;
    it stops with `stack`. Returns its URL, valid at once (the process may still be starting)."""
    for name in sorted(SERVER_PACKAGES):
        if importlib.util.find_spec(name) is None:
            raise OfflineModeUnavailable(
                f"offline mode needs the emulator's server, and {name} is not installed: "
                "install agent-repl[emulator], or set ANTHROPIC_API_KEY to talk to Claude"
            )
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        port = sock.getsockname()[1]
        fd = sock.fileno()
        server = subprocess.Popen(
            [sys.executable, "-m", "agent_repl.offline", "--inherit-fd", str(fd), *_RECORD_LIMIT],
            pass_fds=(fd,),
            stdin=subprocess.PIPE,
            # Nothing of it may reach the agent's screen (`python -m agent_repl.offline` alone shows it).
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    # The agent's copy is closed: if the emulator dies, a request is refused rather than left waiting.
    stack.callback(_stop, server)
    return f"http://127.0.0.1:{port}"


def _stop(server: subprocess.Popen[bytes]) -> None:
    """Closing its stdin ends the emulator; the agent does not wait for it."""
    try:
        assert server.stdin is not None
        server.stdin.close()
    except OSError:
        pass


def offline_model(name: str) -> str:
    """The model the demo emulator serves for `name` (`opus`, `sonnet`, `haiku` resolved), checked
    against its model table here, as the endpoint would answer, without waiting for it to start."""
    from agent_repl.core.api.models import ModelLookupError, alias_target, unknown_model_message
    from agent_repl.emulator.models import default_model_table, unique_specs

    table = default_model_table()
    listing = [{"id": spec.id, "line": getattr(spec, "line", None)} for spec in unique_specs(table)]
    model = alias_target(name, listing)
    if model not in table:
        raise ModelLookupError(unknown_model_message(name, [spec.id for spec in unique_specs(table)]))
    return model
