"""Record the field paths of Claude Code's print-mode output, as a black box, into
`fixtures/cc_<version>_fields.json`: run by hand where the real CLI is installed (not part of the suite).

    .venv/bin/python tests/print_mode/record_cc_fields.py [/usr/bin/claude]

The CLI runs against agent-repl's emulator (a fake key, a throwaway HOME, IS_SANDBOX=1 for
--dangerously-skip-permissions) on the scripted run of `field_paths.STEPS`, once per format of
`field_paths.FORMATS`. Only the structure is kept: line kinds and field paths, no values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from field_paths import FORMATS, STEPS, field_paths  # noqa: E402

from agent_repl.emulator.policies import ScriptPolicy  # noqa: E402
from agent_repl.emulator.server import EmulatorServer  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def record(cli: str) -> dict[str, object]:
    version = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=60).stdout.split()[0]
    outputs: dict[str, object] = {}
    for name, flags in FORMATS.items():
        server = EmulatorServer(policy=ScriptPolicy({"steps": STEPS}))
        server.start()
        try:
            with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as work:
                env = {"PATH": os.environ["PATH"], "HOME": home, "ANTHROPIC_BASE_URL": server.base_url,
                       "ANTHROPIC_API_KEY": "sk-ant-fake-key", "IS_SANDBOX": "1"}  # fmt: skip
                done = subprocess.run(
                    [cli, "-p", "run it", "--dangerously-skip-permissions", *flags],
                    cwd=work, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
                )  # fmt: skip
        finally:
            server.stop()
        if done.returncode != 0:
            raise SystemExit(f"{name}: exit {done.returncode}: {done.stderr[-500:]}")
        outputs[name] = field_paths(json.loads(line) for line in done.stdout.splitlines() if line.strip())
    return {
        "provenance": {
            "cli": "Claude Code (npm @anthropic-ai/claude-code), run as a black box",
            "version": version,
            "recorded": datetime.now(UTC).strftime("%Y-%m-%d"),
            "how": "tests/print_mode/record_cc_fields.py: `claude -p PROMPT --dangerously-skip-permissions` plus "
            "each format's flags, against agent-repl's emulator on field_paths.STEPS; only line kinds and "
            "field paths are kept (no values, no text)",
        },
        "formats": {name: {"flags": FORMATS[name], "kinds": kinds} for name, kinds in outputs.items()},
    }


if __name__ == "__main__":
    recorded = record(sys.argv[1] if len(sys.argv) > 1 else "claude")
    path = FIXTURES / f"cc_{recorded['provenance']['version']}_fields.json"  # type: ignore[index]
    FIXTURES.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(recorded, indent=1) + "\n")
    print(f"wrote {path}")
