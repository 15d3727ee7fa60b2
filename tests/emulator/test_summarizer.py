"""The emulator writes summaries with the summarizer its caller gives it: a few plain lines by
default, the agent's nine sections when offline mode (or a test) gives it the agent's own."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import anthropic

from agent_repl.emulator.engine import Engine
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.policies.summary import RequestKind
from agent_repl.emulator.server import EmulatorServer
from agent_repl.offline import start_offline_emulator

SONNET = "claude-sonnet-5-5"
COMPACT_BETA = "compact-2026-09-04"
HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "Read the config."},
    {"role": "assistant", "content": [{"type": "text", "text": "It sets the port to 8080."}]},
    {"role": "user", "content": "And the logs?"},
    {"role": "assistant", "content": [{"type": "text", "text": "They are empty."}]},
]


class Recording:
    """A summarizer that says who asked it what."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str | None]] = []

    def summary(self, body: dict[str, Any], kind: RequestKind) -> str:
        self.asked.append((kind, None))
        return f"{kind} of {len(body['messages'])} messages"

    def compaction(self, body: dict[str, Any], instructions: str | None) -> str:
        self.asked.append(("compaction", instructions))
        return f"compaction of {len(body['messages'])} messages"


def answer(engine: Engine, **extra: Any) -> tuple[str, list[dict[str, Any]]]:
    body = {"model": SONNET, "max_tokens": 500, **extra}
    betas = {COMPACT_BETA} if "compaction" in body else set()
    prepared = engine.prepare(body, api_key="k", betas=betas, request_index=0)
    completion = engine.respond(prepared)
    return completion.stop_reason, completion.content


def summary_request(marker: str) -> list[dict[str, Any]]:
    return [*HISTORY, {"role": "user", "content": f"{marker}\nSummarize the conversation."}]


def test_by_default_a_summary_is_a_few_plain_lines_in_no_clients_format() -> None:
    engine = Engine(default_model_table(), ScriptPolicy({"steps": []}), clock=lambda: 0.0)
    _, [block] = answer(engine, messages=summary_request("<summary-request>"))
    text = block["text"]
    assert text.splitlines() == [
        "The conversation so far: 5 messages, 2 of them from the assistant.",
        "It began with: Read the config.",
        "The latest request: And the logs?",
    ]
    stop, [compacted] = answer(engine, messages=HISTORY, compaction={"type": "summarize", "instructions": "logs"})
    assert stop == "compaction" and compacted["type"] == "compaction"
    assert compacted["content"].startswith("Focus requested: logs\n\nThe conversation so far: 4 messages")


def test_the_given_summarizer_answers_summary_and_memory_requests_and_writes_compaction_blocks() -> None:
    summarizer = Recording()
    engine = Engine(default_model_table(), ScriptPolicy({"steps": []}), clock=lambda: 0.0, summarizer=summarizer)
    _, [summary] = answer(engine, messages=summary_request("<summary-request>"))
    _, [memory] = answer(engine, messages=summary_request("<session-memory-request>"))
    _, [compacted] = answer(engine, messages=HISTORY, compaction={"type": "summarize", "instructions": "logs"})
    assert summary["text"] == "summary of 5 messages" and memory["text"] == "memory of 5 messages"
    assert compacted["content"] == "compaction of 4 messages"
    assert summarizer.asked == [("summary", None), ("memory", None), ("compaction", "logs")]


def test_the_server_keeps_its_summarizer_when_it_starts_a_fresh_engine() -> None:
    summarizer = Recording()
    server = EmulatorServer(policy=ScriptPolicy({"steps": []}), summarizer=summarizer)
    assert server.engine.summarizer is summarizer
    server.reset(policy=ScriptPolicy({"steps": []}))
    assert server.engine.summarizer is summarizer


def test_offline_mode_answers_with_the_agents_nine_sections() -> None:
    with ExitStack() as stack:
        base_url = start_offline_emulator(stack)
        with anthropic.Anthropic(base_url=base_url, api_key="offline", max_retries=0) as client:
            reply = client.messages.create(model=SONNET, max_tokens=500, messages=summary_request("<summary-request>"))
    [block] = reply.content
    assert block.type == "text" and "<summary>" in block.text
    assert "6. All User Messages:\n   - Read the config.\n   - And the logs?" in block.text
