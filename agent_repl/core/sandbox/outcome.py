"""After a sandboxed command: what the sandbox refused, said in words the model can act on.

The sandbox refuses with EACCES, which a program reports as "Permission denied" (or
"Operation not permitted"). The paths those lines name are checked against the policy; what
the policy refuses is named in the result, so the model neither guesses nor retries blindly.
"""

from __future__ import annotations

import re
from pathlib import Path

from agent_repl.core.sandbox.policy import SandboxPolicy

_REFUSED = re.compile(r"Permission denied|Operation not permitted|Errno 13|Errno 1\]|EACCES|EPERM")
# A path in an error line: absolute, or under the home, quoted or bare.
_PATH = re.compile(r"""(?:^|[\s'"`‘(:])((?:/|~/)[^\s'"`’:,)]+)""")
_NETWORK = re.compile(r"connect|socket|port \d+|Connection|network|TCP", re.IGNORECASE)

OUTSIDE_HINT = (
    "If the command truly needs this, call Bash again with dangerouslyDisableSandbox set to true and say why; "
    "the user is asked first."
)


def sandbox_refusals(output: str, policy: SandboxPolicy, *, home: Path | None = None, cwd: Path | None = None) -> list[str]:
    """What the sandbox refused, one phrase each ("write to /x outside the project"), newest last."""
    found: list[str] = []
    home_text = str(home or Path.home())
    lines = output.splitlines()[-400:]
    for i, line in enumerate(lines):
        if not _REFUSED.search(line):
            continue
        paths = [m.group(1) for m in _PATH.finditer(line)]
        said = False
        for raw in paths:
            path = Path(raw.replace("~", home_text, 1) if raw.startswith("~/") else raw)
            if not path.is_absolute() and cwd is not None:
                path = cwd / path
            if not policy.may_read(path):
                found.append(f"read of {path} (a private path the sandbox hides)")
                said = True
            elif not policy.may_write(path):
                found.append(f"write to {path} outside the project and the folders the sandbox may write")
                said = True
        # A traceback names the call a line or two above the error itself.
        if not said and not paths and _NETWORK.search("\n".join(lines[max(0, i - 2) : i + 1])):
            ports = ", ".join(str(p) for p in policy.allow_ports) or "none"
            found.append(f"a TCP connection (allowed ports: {ports})")
    return list(dict.fromkeys(found))


def explain(output: str, exit_code: int | None, policy: SandboxPolicy, *, cwd: Path | None = None) -> str | None:
    """The note appended to a failed sandboxed command's result, or None when the sandbox is not why."""
    if exit_code == 0:
        return None
    refusals = sandbox_refusals(output, policy, cwd=cwd)
    if not refusals:
        return None
    return "Blocked by the sandbox: " + "; ".join(refusals) + ".\n" + OUTSIDE_HINT
