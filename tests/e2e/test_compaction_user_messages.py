"""What the user typed survives a summary that leaves it out, through the real loop against the emulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_repl.bootstrap import close_session, open_session
from agent_repl.core.loop.compact import compact_now
from agent_repl.core.model.messages import SystemMessage, UserMessage
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.emulator.server import EmulatorServer

from .compaction_support import RICH_FILES, run, settings_for

PROMPTS = [
    "Rename the function parse_config to load_config in settings.py, keep the old name as an alias.",
    "Also: never touch the vendored folder third_party/, I patch it by hand (ticket QX-4411).",
    "Use tabs, not spaces, in the Makefile. The CI image is ubuntu-22.04 with make 4.3.",
    "What does the warning 'deprecated since 3.2' in loader.py mean for us?",
]


class ForgetfulSummarizer:
    """A summarizer that keeps nothing the user said word for word: the lossy case."""

    def summary(self, body: dict[str, Any], kind: Any) -> str:
        return (
            "<analysis>Read the conversation.</analysis>\n<summary>\n1. Primary Request and Intent: some "
            "renaming and build chores.\n6. All User Messages: (paraphrased) several requests about code style.\n"
            "8. Pending Tasks: none noted.\n</summary>"
        )

    def compaction(self, body: dict[str, Any], instructions: str | None) -> str:
        return "The user asked for some renaming and build chores; details were not kept."


def steps(turns: int) -> list[dict[str, Any]]:
    """Each turn reads a file, so the early prompts fall out of any kept tail."""
    out: list[dict[str, Any]] = []
    for n in range(turns):
        path = RICH_FILES[n % len(RICH_FILES)]
        out += [{"tools": [{"name": "Read", "input": {"file_path": str(path)}}]}, {"text": f"Done with step {n}."}]
    return out


async def _compact(session: Any, server: EmulatorServer, kind: str) -> None:
    """Compact the way `kind` does; for a reactive one, the next main request is too long."""
    if kind == "session-memory":
        memory = session.memory
        memory.first_after_tokens = 1
        memory.maybe_start(session)
        assert await memory.wait_for_extraction(timeout=30) and memory.content, memory.last_error
    if kind == "reactive":
        server.faults.at(server.state.request_count, "prompt_too_long")
        return
    assert await compact_now(session, "manual").run_to_end() is True


@pytest.mark.parametrize("kind", ["our-summary", "api-compaction", "session-memory", "reactive"])
async def test_every_user_message_is_in_the_first_request_after_a_summary_that_left_them_out(
    tmp_path: Path, kind: str
):
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps(len(PROMPTS) + 1)}), summarizer=ForgetfulSummarizer())
    server.start()
    settings = settings_for(server, tmp_path, api_compaction=kind == "api-compaction")
    session = await open_session(settings, tmp_path)
    try:
        for text in PROMPTS:
            await run(session, text)
        await _compact(session, server, kind)
        before = len(server.recordings.messages)
        events = await run(session, "carry on")
        assert events[-1].reason == "completed"
        [boundary] = [m for m in session.messages if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"]
        assert bool(boundary.metadata["apiSummary"]) is (kind == "api-compaction")
        assert bool(boundary.metadata["usedSessionMemory"]) is (kind == "session-memory")
        assert boundary.metadata["trigger"] == ("reactive" if kind == "reactive" else "manual")
        # The first prompt is not in the kept tail: only the re-injection can bring it back.
        first = next(i for i, m in enumerate(session.messages) if isinstance(m, UserMessage) and m.text() == PROMPTS[0])
        kept_from = boundary.metadata["keptFromUuid"]
        assert kept_from is None or first < next(i for i, m in enumerate(session.messages) if m.uuid == kept_from)
        first_after = next(
            e
            for e in server.recordings.messages[before:]
            if e.status == 200 and request_kind(e.body) is None and not e.body.get("compaction")
        )
        sent = json.dumps(first_after.body["messages"], ensure_ascii=False)
        assert "carry on" in sent and "Done with step" not in sent.split("carry on")[-1]
    finally:
        await close_session(session)
        server.stop()
    forgetful = ForgetfulSummarizer()
    summary_said = json.dumps(forgetful.summary({}, "summary") + forgetful.compaction({}, None))
    for text in PROMPTS:
        quoted = json.dumps(text, ensure_ascii=False)[1:-1]
        assert quoted not in summary_said
        assert quoted in sent, f"missing after the compaction: {text}"
