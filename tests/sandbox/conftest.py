"""The sandbox's tests run real commands under Landlock; where the kernel lacks it they are skipped."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_repl.core.sandbox import Sandbox, SandboxPolicy, SandboxSettings, detect

NO_LANDLOCK = "this kernel offers no Landlock (needs Linux 5.13+ with the LSM enabled)"
needs_landlock = pytest.mark.skipif(detect().mechanism != "landlock", reason=NO_LANDLOCK)


@dataclass
class Layout:
    """A project, a user's home with secrets, a temp dir and a folder outside all of them."""

    project: Path
    home: Path
    temp: Path
    outside: Path
    agent_home: Path


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    project, home, temp, outside = (tmp_path / n for n in ("project", "home", "tmp", "outside"))
    for d in (project, home / ".ssh", temp, outside, home / ".agent_repl" / "projects"):
        d.mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    (home / ".bashrc").write_text("# the user's shell setup\n")
    (project / "README.md").write_text("# demo\n")
    return Layout(project, home, temp, outside, home / ".agent_repl")


def make_sandbox(layout: Layout, **settings: object) -> Sandbox:
    config = SandboxSettings(**settings)
    policy = SandboxPolicy.build(
        config, project=layout.project, home=layout.home, agent_home=layout.agent_home, temp_dir=layout.temp
    )
    return Sandbox(config, policy)


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on loopback; yields its port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    try:
        yield server.getsockname()[1]
    finally:
        server.close()
