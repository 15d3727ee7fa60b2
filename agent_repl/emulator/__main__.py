"""`python -m agent_repl.emulator`: run the emulator on loopback until interrupted.

The first line on stdout is `listening on http://HOST:PORT` (flushed), with the real port when
`--port 0` asked for a free one, so a parent process can read it and connect; the second is
`control token TOKEN`, the `x-emulator-token` header value its `/_emulator` routes need.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import threading
from collections.abc import Callable, Mapping

from agent_repl.emulator.app import DEFAULT_MAX_BODY_BYTES
from agent_repl.emulator.faults import FaultPlan
from agent_repl.emulator.models import ModelTableError, default_model_table, load_model_table
from agent_repl.emulator.policies import Policy, ScenarioError, policy_from_spec
from agent_repl.emulator.policies.summary import Summarizer
from agent_repl.emulator.recording import RecordLimit
from agent_repl.emulator.server import EmulatorServer, is_loopback
from agent_repl.emulator.tokens import cl100k


def build_parser(
    prog: str = "python -m agent_repl.emulator", default_policy: str | None = None
) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="A local Anthropic Messages API emulator.")
    parser.add_argument(
        "--host", default="127.0.0.1", help="loopback address to listen on (default 127.0.0.1)"
    )
    parser.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (default 0)")
    if default_policy is None:
        parser.add_argument("--policy", required=True, help="who answers: script:FILE")
    else:
        parser.add_argument(
            "--policy", default=default_policy, help=f"who answers: {default_policy} (default) or script:FILE"
        )
    parser.add_argument("--model-table", metavar="FILE", help="JSON model table replacing the built-in one")
    parser.add_argument("--context-window", type=int, metavar="N", help="force every model's context window")
    parser.add_argument(
        "--faults", metavar="SPEC", default="", help='e.g. "2:429,5:stream_error" or "rate=0.2,seed=7"'
    )
    parser.add_argument(
        "--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES, metavar="N", help="413 above this size"
    )
    parser.add_argument(
        "--cache-editing",
        action="store_true",
        help="also accept our cache-editing beta (not part of the public API; off by default)",
    )
    parser.add_argument(
        "--lenient-thinking-prefix",
        action="store_true",
        help="play an account created before 2026-08-31: a changed thinking prefix fails only when asked",
    )
    parser.add_argument(
        "--no-web-tools",
        action="store_true",
        help="play an organization whose administrator has not enabled web search and fetch",
    )
    parser.add_argument(
        "--max-recorded",
        type=int,
        default=RecordLimit.exchanges,
        metavar="N",
        help="keep at most the last N exchanges for /_emulator/requests",
    )
    parser.add_argument(
        "--max-recorded-bytes",
        type=int,
        default=RecordLimit.bytes,
        metavar="N",
        help="keep at most about N bytes of recorded requests and responses",
    )
    parser.add_argument(
        "--inherit-fd",
        type=int,
        metavar="FD",
        help="serve on this listening loopback socket, bound by the parent process, instead of --host "
        "and --port; quit when stdin closes (the parent exited)",
    )
    return parser


def _listening_socket(fd: int) -> socket.socket:
    """The parent's socket, checked to listen on loopback; stdin's end (the parent gone) ends the process."""
    sock = socket.socket(fileno=fd)
    if not is_loopback(str(sock.getsockname()[0])):
        raise ValueError("--inherit-fd: the socket is not bound to a loopback address")

    def exit_with_parent() -> None:
        while sys.stdin.buffer.read(65536):
            pass
        os._exit(0)  # nothing of the emulator's outlives a request; no need to shut down in order

    threading.Thread(target=exit_with_parent, name="agent-repl-emulator-parent", daemon=True).start()
    return sock


def main(
    argv: list[str] | None = None,
    *,
    prog: str = "python -m agent_repl.emulator",
    named_policies: Mapping[str, Callable[[], Policy]] | None = None,
    default_policy: str | None = None,
    summarizer: Summarizer | None = None,
) -> int:
    """Serve until interrupted. `named_policies` are the policies a caller adds to `script:FILE`
    (the offline mode adds its demo model as `demo`, its default); `summarizer` writes the
    summaries (the offline mode gives the agent's own)."""
    parser = build_parser(prog, default_policy)
    args = parser.parse_args(argv)
    try:
        models = load_model_table(args.model_table) if args.model_table else default_model_table()
        policy = policy_from_spec(args.policy, named_policies)
        faults = FaultPlan.parse(args.faults)
        record_limit = RecordLimit(args.max_recorded, args.max_recorded_bytes)
    except (ModelTableError, ScenarioError, ValueError, OSError) as err:
        parser.error(str(err))
    if args.context_window is not None and args.context_window <= 0:
        parser.error("--context-window must be positive")
    try:
        server = EmulatorServer(
            policy=policy,
            models=models,
            host=args.host,
            port=args.port,
            context_window=args.context_window,
            faults=faults,
            max_body_bytes=args.max_body_bytes,
            record_limit=record_limit,
            cache_editing=args.cache_editing,
            thinking_prefix_enforced=not args.lenient_thinking_prefix,
            web_tools_enabled=not args.no_web_tools,
            summarizer=summarizer,
        )
    except ValueError as err:
        parser.error(str(err))

    def announce(url: str) -> None:
        print(f"listening on {url}\ncontrol token {server.control_token}", flush=True)

    try:
        sock = _listening_socket(args.inherit_fd) if args.inherit_fd is not None else None
    except (OSError, ValueError) as err:
        parser.error(str(err))
    # Every request counts tokens: load the encoding while the server starts and waits for one.
    threading.Thread(target=cl100k, name="agent-repl-emulator-tokenizer", daemon=True).start()
    try:
        server.serve_forever(announce, sock=sock)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
