"""A `compaction` block is a beta input: the request that sends it back names a compaction beta,
or the API answers 400 as it does for any beta input without its header; the summary streams
as one start, one `compaction_delta` carrying the whole summary, and a stop."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from agent_repl.emulator.policies import Reply

SONNET = "claude-sonnet-5-5"
COMPACT_BETA = "compact-2026-09-04"


def summarized(client: anthropic.Anthropic) -> list[dict[str, Any]]:
    """A history whose first message is the API's signed summary, then a new prompt."""
    history = [
        {"role": "user", "content": "Read the config."},
        {"role": "assistant", "content": [{"type": "text", "text": "It sets the port to 8080."}]},
    ]
    reply = client.beta.messages.create(
        model=SONNET, max_tokens=200, messages=history, compaction={"type": "summarize"}, betas=[COMPACT_BETA]
    )
    [block] = reply.content
    return [
        {"role": "assistant", "content": [block.model_dump(exclude_none=True)]},
        {"role": "user", "content": "Go on."},
    ]


def test_a_compaction_block_without_its_beta_is_a_400(client, use_policy) -> None:
    use_policy(lambda request: Reply([{"type": "text", "text": "ok"}]))
    later = summarized(client)
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model=SONNET, max_tokens=200, messages=later)
    error = caught.value.body["error"]
    assert caught.value.status_code == 400 and error["type"] == "invalid_request_error"
    assert error["message"].startswith("messages.0.content.0: Input tag 'compaction'")
    assert caught.value.body["type"] == "error" and caught.value.body["request_id"]
    # The same request naming the beta goes through, as does the threshold feature's beta.
    for beta in (COMPACT_BETA, "compact-2026-01-12"):
        reply = client.beta.messages.create(model=SONNET, max_tokens=200, messages=later, betas=[beta])
        assert reply.stop_reason == "end_turn"


def test_the_summary_streams_whole_in_one_compaction_delta(client, use_policy) -> None:
    use_policy(lambda request: Reply([{"type": "text", "text": "ok"}]))
    messages = [
        {"role": "user", "content": "Read the config."},
        {"role": "assistant", "content": [{"type": "text", "text": "It sets the port to 8080. " * 40}]},
        {"role": "user", "content": "And the logs?"},
    ]
    stream = client.beta.messages.create(
        model=SONNET, max_tokens=200, messages=messages, compaction={"type": "summarize"}, betas=[COMPACT_BETA], stream=True
    )
    events = [event.model_dump(mode="json") for event in stream]
    blocks = [e for e in events if e["type"].startswith("content_block")]
    assert [e["type"] for e in blocks] == ["content_block_start", "content_block_delta", "content_block_stop"]
    start, delta, _ = blocks
    assert start["content_block"]["type"] == "compaction" and start["content_block"]["content"] is None
    assert start["content_block"]["signature"]
    assert delta["delta"]["type"] == "compaction_delta" and len(delta["delta"]["content"]) > 50
    assert [e["delta"]["stop_reason"] for e in events if e["type"] == "message_delta"] == ["compaction"]
