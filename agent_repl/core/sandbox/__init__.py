"""The OS sandbox a Bash command runs in: Landlock on Linux, Seatbelt (sandbox-exec) on macOS.

It stands behind the permission system, not instead of it: a command the rules or the user
approved still cannot write outside the project, read the user's secrets or open a TCP
connection the settings do not allow. `Sandbox` is one session's: it detects what the system
offers, builds the rules once, and gives each command's child what it needs to enter them.
"""

from __future__ import annotations

import platform
import shutil
from collections.abc import Sequence
from concurrent.futures import BrokenExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent_repl.core.sandbox import landlock, seatbelt
from agent_repl.core.sandbox.policy import WRITABLE_DEVICES, SandboxPolicy, SandboxSettings, readable_grants
from agent_repl.core.sandbox.spawn import ConfinedSpawner, SandboxedProcess, spawn_plain

__all__ = ["Sandbox", "SandboxPolicy", "SandboxSettings", "SandboxStatus"]


@dataclass(frozen=True)
class SandboxStatus:
    """Whether commands are sandboxed, by what, and why not when they are not."""

    active: bool
    mechanism: str  # "landlock", "seatbelt" or "none"
    abi: int = 0
    reason: str = ""
    # Whether TCP connections are filtered (Landlock needs ABI 4).
    filters_network: bool = False

    @property
    def line(self) -> str:
        if self.active:
            detail = f" ABI {self.abi}" if self.mechanism == "landlock" else ""
            net = "" if self.filters_network else "; TCP connections are NOT filtered (kernel too old)"
            return f"on ({self.mechanism}{detail}){net}"
        return f"off: {self.reason}"


def detect(system: str | None = None) -> SandboxStatus:
    """What this machine offers, without changing anything."""
    system = system or platform.system()
    if system == "Linux":
        abi = landlock.abi_version()
        if abi >= 1:
            return SandboxStatus(True, "landlock", abi, filters_network=abi >= 4)
        return SandboxStatus(False, "none", reason="this Linux kernel offers no Landlock (5.13+ with it enabled)")
    if system == "Darwin":
        if shutil.which("sandbox-exec"):
            return SandboxStatus(True, "seatbelt", filters_network=True)
        return SandboxStatus(False, "none", reason="sandbox-exec was not found")
    return SandboxStatus(False, "none", reason=f"no sandbox is available on {system}")


@dataclass
class Sandbox:
    """One session's sandbox: the settings, the resolved policy and the prepared rules."""

    settings: SandboxSettings
    policy: SandboxPolicy
    system: SandboxStatus = field(default_factory=detect)
    _ruleset: landlock.Ruleset | None = field(default=None, init=False, repr=False)
    _spawner: ConfinedSpawner | None = field(default=None, init=False, repr=False)

    @classmethod
    def for_session(
        cls, settings: SandboxSettings, *, project: Path, added_dirs: list[Path], agent_home: Path, tool_results_dir: Path | None
    ) -> Sandbox:
        policy = SandboxPolicy.build(
            settings, project=project, added_dirs=added_dirs, agent_home=agent_home, tool_results_dir=tool_results_dir
        )
        return cls(settings, policy)

    @property
    def active(self) -> bool:
        return self.settings.enabled and self.system.active

    @property
    def auto_allow(self) -> bool:
        return self.active and self.settings.auto_allow

    def status_line(self) -> str:
        if not self.settings.enabled:
            return "off (sandbox.enabled is false)"
        mode = "sandboxed commands run without asking" if self.settings.auto_allow else "commands are still asked"
        return f"{self.system.line}; {mode}" if self.system.active else self.system.line

    def notice(self) -> str | None:
        """The one line a session shows at start-up when commands cannot be sandboxed."""
        if self.settings.enabled and not self.system.active:
            return f"Commands run without an OS sandbox: {self.system.reason}."
        return None

    def configure(self, **changes: object) -> None:
        """Change the settings for the rest of the session (/sandbox); the rules are rebuilt."""
        self.settings = self.settings.model_copy(update=changes)
        self.policy = replace(self.policy, allow_ports=tuple(self.settings.allow_ports))
        self.close()

    def add_write_root(self, directory: Path) -> None:
        """Let later commands write in `directory` too (/add-dir); the rules are rebuilt."""
        if directory in self.policy.write_roots:
            return
        self.policy = replace(self.policy, write_roots=(*self.policy.write_roots, directory))
        self.close()

    # How a command enters it.

    async def spawn(self, argv: Sequence[str], **popen: Any) -> SandboxedProcess:
        """Start `argv` inside the sandbox (Popen's keyword arguments); raises OSError when the
        sandbox cannot be entered, so nothing runs unconfined by mistake."""
        if self.system.mechanism == "seatbelt":
            return await spawn_plain(["sandbox-exec", "-p", seatbelt.profile(self.policy), *argv], **popen)
        if self._spawner is None:
            rules = self._build_ruleset()
            self._spawner = ConfinedSpawner(rules.restrict_current_thread)
            self._ruleset = rules
        try:
            return await self._spawner.spawn(argv, **popen)
        except BrokenExecutor as exc:
            self.close()
            raise OSError(f"could not enter the sandbox: {exc}") from exc

    def _build_ruleset(self) -> landlock.Ruleset:
        abi = self.system.abi
        rules = landlock.Ruleset.create(abi, filter_tcp_connect=True)
        try:
            rules.allow_path("/", landlock.FS_READ_DIR)
            for path in readable_grants(self.policy):
                rules.allow_path(str(path), landlock.FS_READ)
            write = landlock.write_rights(abi)
            for root in self.policy.write_roots:
                if root.exists():
                    rules.allow_path(str(root), write)
            for device in WRITABLE_DEVICES:
                if Path(device).exists():
                    rules.allow_path(device, write)
            for port in self.policy.allow_ports:
                rules.allow_tcp_connect(port)
        except BaseException:
            rules.close()
            raise
        return rules

    def close(self) -> None:
        if self._spawner is not None:
            self._spawner.close()
            self._spawner = None
        if self._ruleset is not None:
            self._ruleset.close()
            self._ruleset = None
