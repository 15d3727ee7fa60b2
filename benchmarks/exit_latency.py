"""How long `/exit` and Ctrl+D take to leave the full-screen app, in a real terminal (tmux).

    .venv/bin/python benchmarks/exit_latency.py [RUNS]

For each run: start agent-repl on the emulator, answer one prompt, then press the key and time
until the shell prints the exit marker (the process is gone). Prints the median and the maximum.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.ui.tmux import EXIT_MARKER, TmuxBed, unwrapped  # noqa: E402


def main(runs: int = 5) -> None:
    bed = TmuxBed(Path(tempfile.mkdtemp(prefix="exit-latency-")))
    times: dict[str, list[float]] = {"/exit": [], "Ctrl+D": []}
    try:
        for way in list(times) * runs:
            bed.script([{"text": "Answered."}])
            term = bed.start()
            term.wait_for("/help lists commands")
            term.type("hi")
            term.wait_for("Answered.")
            if way == "/exit":
                term.write("/exit")
            started = time.monotonic()
            term.keys("Enter" if way == "/exit" else "C-d")
            while EXIT_MARKER not in unwrapped(term.screen()):
                time.sleep(0.02)
            times[way].append(time.monotonic() - started)
            term.close()
    finally:
        bed.close()
    for way, seen in times.items():
        print(f"{way}: {len(seen)} runs, median {statistics.median(seen):.2f}s, max {max(seen):.2f}s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
