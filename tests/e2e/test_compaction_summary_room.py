"""A summary request at the window's edge leaves room for the reply it needs, so it is made once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.model.events import CompactionFinished
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer

from .compaction_support import RICH_FILES, run, settings_for

WINDOW = 50_000
TURNS = 30


class LongSummaries:
    """Summaries longer than the window's reserve for them, as real ones can be."""

    def summary(self, body: dict[str, Any], kind: Any) -> str:
        return "<analysis>Went through it.</analysis>\n<summary>\n" + " ".join(f"w{i}" for i in range(3_000)) + "\n</summary>"

    def compaction(self, body: dict[str, Any], instructions: str | None) -> str:
        return "unused"


def stop_reason(exchange: Any) -> str | None:
    for event in exchange.events:
        data = event.get("data")
        if isinstance(data, dict) and data.get("type") == "message_delta":
            return data["delta"].get("stop_reason")
    return None


async def test_after_the_first_summary_each_compaction_asks_for_its_summary_once(tmp_path: Path):
    files = sorted(RICH_FILES, key=lambda p: -p.stat().st_size)
    steps: list[dict[str, Any]] = []
    for n in range(TURNS):
        steps += [{"tools": [{"name": "Read", "input": {"file_path": str(files[n % len(files)])}}]}, {"text": f"ok {n}"}]
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps}), summarizer=LongSummaries(), context_window=WINDOW)
    server.start()
    settings = settings_for(server, tmp_path, api_compaction=False, context_window=WINDOW)
    session = await open_session(settings, tmp_path)
    session.memory = None  # every compaction asks for a summary (no session-memory ones)
    compactions = 0
    try:
        for n in range(TURNS):
            events = await run(session, f"turn {n}: read the next file")
            assert events[-1].reason == "completed"
            compactions += sum(isinstance(e, CompactionFinished) for e in events)
        # Summary requests in a row, between main requests: one compaction's attempts.
        runs: list[list[Any]] = []
        previous_main = True
        for exchange in server.recordings.messages:
            if request_kind(exchange.body) == "summary":
                if previous_main:
                    runs.append([])
                runs[-1].append(exchange)
            previous_main = request_kind(exchange.body) != "summary"
    finally:
        await close_session(session)
        server.stop()
    assert compactions >= 3 and len(runs) == compactions
    # The first summary's size is unknown until it comes back; after it, the request leaves it room.
    later = [[stop_reason(e) for e in attempts] for attempts in runs[1:]]
    assert all(reasons == ["end_turn"] for reasons in later), later
