"""/sandbox: whether Bash commands run in the OS sandbox, what it allows, and its two modes.

Changes made here last for the session; the `sandbox` key of a settings file makes them stick.
"""

from __future__ import annotations

from agent_repl.commands.registry import CommandContext
from agent_repl.commands.results import CommandResult, StatusReport, TextOutput

SANDBOX_USAGE = (
    "usage: /sandbox [on | off | auto | ask | allow-port PORT | deny-port PORT]\n"
    "  auto: sandboxed commands run without a question (network and outside writes still ask)\n"
    "  ask: every command is asked as the permission rules say (the sandbox is a second wall)"
)


def _report(ctx: CommandContext) -> StatusReport:
    sandbox = ctx.session.sandbox
    policy, status = sandbox.policy, sandbox.system
    ports = ", ".join(str(p) for p in policy.allow_ports) or "none"
    network = (
        f"TCP connections only to ports: {ports} (any host; UDP, and local sockets by path, are not filtered)"
        if status.filters_network
        else "not filtered (this kernel's Landlock has no network rules)"
    )
    rows = [
        ("sandbox", sandbox.status_line()),
        ("mechanism", f"{status.mechanism}" + (f", Landlock ABI {status.abi}" if status.mechanism == "landlock" else "")),
        ("writes", ", ".join(str(p) for p in policy.write_roots)),
        ("reads", "everywhere except: " + ", ".join(str(p) for p in policy.deny_read if p.exists()) or "everywhere"),
        ("network", network),
        ("outside the sandbox", "asked every time" if sandbox.settings.allow_unsandboxed else "never (sandbox.allow_unsandboxed is false)"),
    ]
    return StatusReport(rows=rows)


async def sandbox_command(ctx: CommandContext, args: str) -> CommandResult:
    sandbox = ctx.session.sandbox
    verb, _, rest = args.strip().partition(" ")
    rest = rest.strip()
    if not verb:
        return _report(ctx)
    if verb in ("on", "off"):
        sandbox.configure(enabled=verb == "on")
        if verb == "on" and not sandbox.system.active:
            return TextOutput(f"the sandbox cannot run here: {sandbox.system.reason}", level="error")
        return TextOutput(f"sandbox {verb} for this session: {sandbox.status_line()}")
    if verb in ("auto", "ask"):
        sandbox.configure(auto_allow=verb == "auto")
        return TextOutput(f"sandbox: {sandbox.status_line()} (this session)")
    if verb in ("allow-port", "deny-port"):
        try:
            port = int(rest)
        except ValueError:
            return TextOutput(f"{rest!r} is not a port number\n{SANDBOX_USAGE}", level="error")
        if not 1 <= port <= 65535:
            return TextOutput(f"{port} is not a TCP port (1-65535)", level="error")
        ports = set(sandbox.settings.allow_ports)
        ports = ports | {port} if verb == "allow-port" else ports - {port}
        sandbox.configure(allow_ports=sorted(ports))
        shown = ", ".join(str(p) for p in sorted(ports)) or "none"
        return TextOutput(
            f"sandboxed commands may connect to TCP ports: {shown} (this session; any host on those ports; "
            'to keep it, add "sandbox": {"allow_ports": [...]} to your settings)'
        )
    return TextOutput(SANDBOX_USAGE, level="error")
