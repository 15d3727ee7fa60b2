"""macOS: a Seatbelt profile for `sandbox-exec -p`, written from the same policy as Landlock's rules.

Everything is allowed by default, then writes outside the allowed roots, reads of the denied
paths and outbound TCP to ports not allowed are refused. (Written to Apple's profile language;
it cannot be run on Linux, so its tests check the text.)
"""

from __future__ import annotations

from agent_repl.core.sandbox.policy import WRITABLE_DEVICES, SandboxPolicy


def _quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def profile(policy: SandboxPolicy) -> str:
    writable = [*(str(p) for p in policy.write_roots), *WRITABLE_DEVICES]
    lines = ["(version 1)", "(allow default)"]
    lines.append("(deny file-write* (require-not (require-any")
    lines += [f"  (subpath {_quote(p)})" for p in writable]
    lines.append(")))")
    if policy.deny_read:
        lines.append("(deny file-read* (require-all (require-any")
        lines += [f"  (subpath {_quote(str(p))})" for p in policy.deny_read]
        lines.append(") (require-not (require-any")
        lines += [f"  (subpath {_quote(str(p))})" for p in policy.read_exceptions] or ['  (literal "/nonexistent")']
        lines.append("))))")
    lines.append('(deny network-outbound (remote tcp "*:*"))')
    lines += [f'(allow network-outbound (remote tcp "*:{port}"))' for port in policy.allow_ports]
    # Local (Unix domain) sockets stay open: they are how a command talks to the system's services.
    lines.append('(allow network-outbound (remote unix-socket))')
    return "\n".join(lines) + "\n"
