"""MCP fixtures: the test server (stdio or streamable HTTP), `.mcp.json`, sessions on the emulator."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SERVER = Path(__file__).with_name("mcp_test_server.py")


def stdio_server(*args: str) -> dict[str, Any]:
    """A `.mcp.json` entry that starts the test server over stdio."""
    return {"command": sys.executable, "args": [str(SERVER), *args]}


def write_mcp_json(project: Path, servers: dict[str, Any]) -> Path:
    path = project / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    """The test server over streamable HTTP on a loopback port; yields its URL."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the HTTP test server did not start: {process.stderr.read()!r}") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
        process.stderr.close()
