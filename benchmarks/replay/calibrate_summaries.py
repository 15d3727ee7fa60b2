"""How long a real Claude Code compaction summary is: the size the realistic summaries are made.

    .venv/bin/python -m benchmarks.replay.calibrate_summaries [--data DIR ...]

Reads every `.jsonl` transcript under the shared Claude Code sessions (and any `--data` folder),
finds the compaction summaries (user records with `isCompactSummary`), measures each in
characters and in the emulator's tokens, prints the measurement and writes it to
`summary_sizes.json`, which `summarizers.RealisticSummarizer` sizes its summaries by. When the
sessions read hold no summary (the shared ones do not: their sessions never compacted), the size
is the one issue 29 states for the real summaries of held-out Claude Code sessions (12-16K
characters), labelled as stated rather than measured; a test checks the committed file against
the shared sessions.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent_repl.emulator.tokens import TokenCounter

SIZES_FILE = Path(__file__).resolve().parent / "summary_sizes.json"
# What issue 29 reports for the real summaries in held-out Claude Code sessions (not in ../shared).
STATED_CHARS = (12_000, 16_000)
STATED_SOURCE = "stated in issue 29: the real Claude Code summaries of the held-out sessions (not in ../shared)"


class SummarySizes(BaseModel):
    """The measured summaries and the size range the realistic summarizer draws from."""

    scanned: list[str]  # the transcripts read, relative to their data folder
    chars: list[int]  # each summary found, in characters
    tokens: list[int]  # the same, in the emulator's tokens
    target_chars: tuple[int, int]  # the range a realistic summary's length is drawn from
    source: str  # "measured ..." or the stated figure when nothing was found

    @property
    def chars_per_token(self) -> float | None:
        return sum(self.chars) / sum(self.tokens) if self.tokens and sum(self.tokens) else None

    def describe(self) -> str:
        low, high = self.target_chars
        if not self.chars:
            return (
                f"no compaction summary in the {len(self.scanned)} transcripts read; {low:,}-{high:,} characters, "
                f"{self.source}"
            )
        return (
            f"{len(self.chars)} summaries in {len(self.scanned)} transcripts: {min(self.chars):,}-{max(self.chars):,} "
            f"characters (median {statistics.median(self.chars):,.0f}), {min(self.tokens):,}-{max(self.tokens):,} tokens"
        )

    @classmethod
    def load(cls, path: Path = SIZES_FILE) -> SummarySizes:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))


def _record_text(record: dict[str, Any]) -> str:
    content = (record.get("message") or {}).get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def summaries_in(path: Path) -> list[str]:
    """The compaction summaries a transcript holds (records that are not JSON are skipped)."""
    found = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("type") == "user" and record.get("isCompactSummary"):
            text = _record_text(record)
            if text.strip():
                found.append(text)
    return found


def measure(folders: list[Path]) -> SummarySizes:
    counter = TokenCounter()
    scanned: list[str] = []
    texts: list[str] = []
    for folder in folders:
        for path in sorted(folder.rglob("*.jsonl")):
            scanned.append(str(path.relative_to(folder)))
            texts += summaries_in(path)
    chars = [len(t) for t in texts]
    tokens = [counter.count_text(t) for t in texts]
    if chars:
        # The middle half of what was measured (every summary when there are few).
        quartiles = statistics.quantiles(chars, n=4) if len(chars) >= 4 else [min(chars), 0, max(chars)]
        return SummarySizes(
            scanned=scanned,
            chars=chars,
            tokens=tokens,
            target_chars=(int(quartiles[0]), int(quartiles[2])),
            source=f"measured: the interquartile range of {len(chars)} real summaries",
        )
    return SummarySizes(scanned=scanned, chars=[], tokens=[], target_chars=STATED_CHARS, source=STATED_SOURCE)


def main(argv: list[str] | None = None) -> int:
    from benchmarks.replay.catalogue import SHARED_DATA

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, action="append", default=[], help="another folder of transcripts")
    args = parser.parse_args(argv)
    folders = [SHARED_DATA / "claude_code", *args.data]
    missing = [f for f in folders if not f.is_dir()]
    if missing:
        print(f"not found: {', '.join(map(str, missing))}")
        return 1
    sizes = measure(folders)
    SIZES_FILE.write_text(sizes.model_dump_json(indent=1) + "\n", encoding="utf-8")
    print(f"wrote {SIZES_FILE}: {sizes.describe()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
