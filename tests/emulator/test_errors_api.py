"""The §5.2 / §1.4 error texts, byte for byte, and the SDK exception class each one maps to."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from agent_repl.emulator.policies import Reply

from .conftest import LEGACY, MODERN, user

TOOL_ID = "toolu_01SWBkC2GPGhoSfEqTZ6y91b"
OTHER_ID = "toolu_01JLr9wQmXHfXhZUq7n3AbCd"
CACHE = {"type": "ephemeral"}


def tool_use(tool_id: str = TOOL_ID) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": "ls"}}


def tool_result(tool_id: str = TOOL_ID, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "file.txt", **extra}


def call(**kwargs: Any) -> dict[str, Any]:
    return {"model": MODERN, "max_tokens": 100, **kwargs}


def convo(*messages: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    return call(messages=list(messages), **kwargs)


ASK = user("List the files.")
MISSING = (
    "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each "
    "`tool_use` block must have a corresponding `tool_result` block in the next message."
)
TTL_ORDER = (
    "{path}: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note "
    "that blocks are processed in the following order: `tools`, `system`, `messages`."
)
BAD_REQUESTS: list[tuple[str, dict[str, Any], str]] = [
    (
        "missing tool_result",
        convo(ASK, {"role": "assistant", "content": [tool_use()]}, user("what now?")),
        MISSING.format(ids=TOOL_ID),
    ),
    (
        "missing tool_results, two ids",
        convo(
            ASK,
            {"role": "assistant", "content": [tool_use(), tool_use(OTHER_ID)]},
            {"role": "user", "content": [tool_result("toolu_01Unrelated")]},
        ),
        MISSING.format(ids=f"{TOOL_ID}, {OTHER_ID}"),
    ),
    (
        "text before the tool_result",
        convo(
            ASK,
            {"role": "assistant", "content": [tool_use()]},
            {"role": "user", "content": [{"type": "text", "text": "here"}, tool_result()]},
        ),
        MISSING.format(ids=TOOL_ID),
    ),
    (
        "unexpected tool_result",
        convo(
            ASK,
            {"role": "assistant", "content": "Sure."},
            {"role": "user", "content": [tool_result(OTHER_ID)]},
        ),
        f"messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: {OTHER_ID}. Each "
        "`tool_result` block must have a corresponding `tool_use` block in the previous message.",
    ),
    (
        "duplicate tool_use id",
        convo(
            ASK,
            {"role": "assistant", "content": [tool_use(), tool_use()]},
            {"role": "user", "content": [tool_result()]},
        ),
        "messages.1.content.1: `tool_use` ids must be unique",
    ),
    (
        "empty string content",
        convo(
            user(""),
        ),
        "messages.0: all messages must have non-empty content except for the optional final assistant message",
    ),
    (
        "empty list content mid-conversation",
        convo(ASK, {"role": "assistant", "content": []}, user("again")),
        "messages.1: all messages must have non-empty content except for the optional final assistant message",
    ),
    (
        "empty text block",
        convo({"role": "user", "content": [{"type": "text", "text": ""}]}),
        "messages: text content blocks must be non-empty",
    ),
    (
        "whitespace-only text",
        convo({"role": "user", "content": [{"type": "text", "text": "  \n"}]}),
        "messages: text content blocks must contain non-whitespace text",
    ),
    (
        "prefill on a 4.6+ model",
        convo(ASK, {"role": "assistant", "content": "The files are"}),
        "This model does not support assistant message prefill. The conversation must end with a user message.",
    ),
    (
        "five cache breakpoints",
        convo(
            {
                "role": "user",
                "content": [{"type": "text", "text": f"part {i}", "cache_control": CACHE} for i in range(5)],
            }
        ),
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    ),
    (
        "four explicit breakpoints plus the automatic one",
        convo(
            {
                "role": "user",
                "content": [{"type": "text", "text": f"part {i}", "cache_control": CACHE} for i in range(4)]
                + [{"type": "text", "text": "tail"}],
            },
            cache_control=CACHE,
        ),
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    ),
    (
        "1h after 5m",
        convo(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "a", "cache_control": CACHE},
                    {"type": "text", "text": "b"},
                    {"type": "text", "text": "c"},
                    {"type": "text", "text": "d"},
                    {"type": "text", "text": "e", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
                ],
            }
        ),
        TTL_ORDER.format(path="messages.0.content.4.cache_control.ttl"),
    ),
    (
        "1h system after a 5m tool",
        convo(
            ASK,
            tools=[{"name": "Bash", "input_schema": {"type": "object"}, "cache_control": CACHE}],
            system=[{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        ),
        TTL_ORDER.format(path="system.0.cache_control.ttl"),
    ),
    (
        "extra top-level field",
        convo(ASK, temperature_bias=1),
        "temperature_bias: Extra inputs are not permitted",
    ),
    (
        "extra field in a tool_use",
        convo(
            ASK,
            {"role": "assistant", "content": [{**tool_use(), "text": "x"}]},
            {"role": "user", "content": [tool_result()]},
        ),
        "messages.1.content.0.tool_use.text: Extra inputs are not permitted",
    ),
    (
        "extra field in a cache_control",
        convo(
            ASK, system=[{"type": "text", "text": "s", "cache_control": {"type": "ephemeral", "scope": "x"}}]
        ),
        "system.0.cache_control.ephemeral.scope: Extra inputs are not permitted",
    ),
    (
        "cache_reference without the cache-editing beta",
        convo(
            ASK,
            {"role": "assistant", "content": [tool_use()]},
            {"role": "user", "content": [tool_result(cache_reference="ref-1")]},
        ),
        "messages.2.content.0.tool_result.cache_reference: Extra inputs are not permitted",
    ),
    (
        "context_management without its beta",
        convo(ASK, context_management={"edits": [{"type": "clear_tool_uses_20250919"}]}),
        "context_management: Extra inputs are not permitted",
    ),
    (
        "tool_use id pattern",
        convo(
            ASK,
            {"role": "assistant", "content": [tool_use("toolu 01/bad")]},
            {"role": "user", "content": [tool_result("toolu 01/bad")]},
        ),
        "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
    ),
    (
        "duplicate tool names",
        convo(ASK, tools=[{"name": "A", "input_schema": {}}] * 2),
        "tools: Tool names must be unique.",
    ),
    (
        "missing max_tokens",
        {"model": MODERN, "messages": [ASK], "max_tokens": anthropic.omit},
        "max_tokens: Field required",
    ),
    (
        "max_tokens not an integer",
        convo(ASK, max_tokens="lots"),
        "max_tokens: Input should be a valid integer",
    ),
    ("messages not a list", call(messages={"role": "user"}), "messages: Input should be a valid list"),
    (
        "unknown role",
        convo({"role": "robot", "content": "hi"}),
        "messages.0.role: Input should be 'user', 'assistant' or 'system'",
    ),
    (
        "text not a string",
        convo({"role": "user", "content": [{"type": "text", "text": 7}]}),
        "messages.0.content.0.text.text: Input should be a valid string",
    ),
    (
        "manual thinking on an adaptive-only model",
        convo(ASK, thinking={"type": "enabled", "budget_tokens": 2048}, max_tokens=4096),
        '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and '
        '"output_config.effort" to control thinking behavior.',
    ),
    (
        "adaptive thinking on a legacy model",
        {"model": LEGACY, "max_tokens": 100, "messages": [ASK], "thinking": {"type": "adaptive"}},
        "adaptive thinking is not supported on this model",
    ),
    (
        "forced tool_choice on Sonnet 5.5",
        convo(ASK, tools=[{"name": "Bash", "input_schema": {"type": "object"}}], tool_choice={"type": "any"}),
        'tool_choice: type "tool" and "any" are not supported for this model.',
    ),
    (
        "max_tokens over the model maximum",
        {"model": LEGACY, "max_tokens": 64001, "messages": [ASK]},
        "max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for claude-haiku-4-5",
    ),
]


def split(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Known SDK parameters stay keyword arguments; anything else travels in extra_body."""
    known = {
        "model",
        "max_tokens",
        "messages",
        "system",
        "tools",
        "cache_control",
        "thinking",
        "metadata",
        "tool_choice",
    }
    extra = {k: v for k, v in kwargs.items() if k not in known}
    return {**{k: v for k, v in kwargs.items() if k in known}, "extra_body": extra or None, "timeout": 30}


@pytest.mark.parametrize(("case", "kwargs", "expected"), BAD_REQUESTS, ids=[c[0] for c in BAD_REQUESTS])
def test_bad_request_text_is_exact(client, emulator, case, kwargs, expected) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(**split(kwargs))
    err = caught.value
    assert err.status_code == 400
    assert err.body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": expected},
        "request_id": err.request_id,
    }
    assert err.response.headers["request-id"] == err.request_id
    assert err.response.headers["x-should-retry"] == "false"


def test_whitespace_text_next_to_real_text_is_accepted(client) -> None:
    content = [{"type": "text", "text": " "}, {"type": "text", "text": "real words"}]
    assert client.messages.create(
        model=MODERN, max_tokens=50, messages=[{"role": "user", "content": content}]
    )


def test_beta_fields_pass_with_their_beta_header(client, use_policy) -> None:
    messages = [
        ASK,
        {"role": "assistant", "content": [tool_use()]},
        {"role": "user", "content": [tool_result(cache_reference=TOOL_ID)]},
    ]
    # The public API has no cache-editing beta: the header itself is refused.
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.beta.messages.create(model=MODERN, max_tokens=50, messages=messages, betas=["cache-editing-agent-repl"])
    assert caught.value.body["error"]["message"].startswith("Unexpected value(s) `cache-editing-agent-repl`")
    use_policy(lambda request: Reply([{"type": "text", "text": "ok"}]), cache_editing=True)
    message = client.beta.messages.create(
        model=MODERN, max_tokens=50, messages=messages, betas=["cache-editing-agent-repl"]
    )
    assert message.stop_reason == "end_turn"


def test_unknown_model_is_404(client, async_client) -> None:
    with pytest.raises(anthropic.NotFoundError) as caught:
        client.messages.create(model="claude-imaginary-9", max_tokens=10, messages=[ASK])
    assert caught.value.body["error"] == {"type": "not_found_error", "message": "model: claude-imaginary-9"}
    with pytest.raises(anthropic.NotFoundError):
        client.messages.count_tokens(model="claude-imaginary-9", messages=[ASK])


def test_prompt_too_long_uses_the_counted_tokens_and_the_window(client, use_policy) -> None:
    use_policy(lambda request: None, context_window=50)
    long_text = "This sentence adds a handful of tokens to the prompt. " * 20
    counted = client.messages.count_tokens(model=MODERN, messages=[user(long_text)]).input_tokens
    assert counted > 50
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model=MODERN, max_tokens=10, messages=[user(long_text)])
    assert caught.value.body["error"]["message"] == f"prompt is too long: {counted} tokens > 50 maximum"


def test_count_tokens_applies_the_same_validation(client) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.count_tokens(model=MODERN, messages=[ASK], extra_body={"max_tokens": 5})
    assert caught.value.body["error"]["message"] == "max_tokens: Extra inputs are not permitted"
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.count_tokens(
            model=MODERN,
            messages=[ASK],
            tool_choice={"type": "tool", "name": "Bash"},
            tools=[{"name": "Bash", "input_schema": {"type": "object"}}],
        )
    assert (
        caught.value.body["error"]["message"]
        == 'tool_choice: type "tool" and "any" are not supported for this model.'
    )
