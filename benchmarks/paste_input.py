"""A 5 MB bracketed paste: how long the terminal parser takes to read it, and how the real app
answers keys after it, in a real terminal (tmux).

    .venv/bin/python benchmarks/paste_input.py [KEYS]

Parse: Textual's own parser against `BulkPasteParser` (agent_repl.ui.paste_input) on the same
5 MB in 64 KB reads, in one run (the ratio is the figure; the seconds are background).
App: agent-repl on the emulator in tmux; the paste goes in with `tmux paste-buffer -p`; the time
until the input shows its placeholder, then for KEYS keys one at a time the time from `send-keys`
until the key is in the input box (tmux capture polled every 5 ms, so about 5 ms is the floor).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual._xterm_parser import XTermParser  # noqa: E402

from agent_repl.ui.paste_input import PASTE_END, PASTE_START, BulkPasteParser  # noqa: E402
from tests.ui.tmux import TmuxBed, input_box  # noqa: E402

LINES = 75_000


def paste_text() -> str:
    return "".join(f"log line {n:06d}: the service answered slowly, retrying in a moment\n" for n in range(LINES))


def parse_seconds(parser: XTermParser, stream: str) -> float:
    started = time.perf_counter()
    for i in range(0, len(stream), 65536):
        for _event in parser.feed(stream[i : i + 65536]):
            pass
    return time.perf_counter() - started


def wait(term, condition, timeout: float = 120.0) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if condition(term.screen()):
            return time.monotonic() - started
        time.sleep(0.005)
    raise SystemExit(f"timed out; the screen was:\n{term.screen()}")


def main(keys: int = 20) -> None:
    text = paste_text()
    stream = f"{PASTE_START}{text}{PASTE_END}"
    textual_s = parse_seconds(XTermParser(), stream)
    bulk_s = parse_seconds(BulkPasteParser(), stream)
    print(f"parse {len(text) / 1e6:.1f} MB: Textual's parser {textual_s:.2f} s, BulkPasteParser {bulk_s:.4f} s "
          f"({textual_s / bulk_s:,.0f}x)")  # fmt: skip

    root = Path(tempfile.mkdtemp(prefix="paste-input-"))
    (root / "paste.txt").write_text(text)
    bed = TmuxBed(root)
    try:
        term = bed.start()
        term.wait_for("/help lists commands")
        started = time.monotonic()
        term.paste_file(root / "paste.txt")
        placeholder = f"[Pasted text #1 +{LINES:,} lines]"
        wait(term, lambda s: input_box(s) == placeholder)
        print(f"app: paste to placeholder {time.monotonic() - started:.2f} s")
        subprocess.run(["tmux", "send-keys", "-t", term.name, "-l", " "], check=True)
        echoes = []
        for k in range(keys):
            subprocess.run(["tmux", "send-keys", "-t", term.name, "-l", "x"], check=True)
            typed = f"{placeholder} {'x' * (k + 1)}"
            echoes.append(wait(term, lambda s, typed=typed: input_box(s) == typed))
        echoes.sort()
        print(f"app: key to screen after the paste, {keys} keys: median {statistics.median(echoes) * 1000:.0f} ms, "
              f"max {echoes[-1] * 1000:.0f} ms")  # fmt: skip
    finally:
        bed.close()


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
