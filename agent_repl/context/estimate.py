"""Token estimates for the view, and `token_count_with_estimation` (issue 4, item 6).

The count the thresholds use is the last response's usage (input + cache read + cache write +
output: what the API itself counted) plus an estimate of everything appended after that
response, minus what snip freed since (the usage cannot see it). Estimates are cl100k counts
(offline) times a ratio learned from the API's own counts during the session. Counts are
memoized by text, so the cost of a turn follows what changed, not the history's length.
"""

from __future__ import annotations

import json

from agent_repl.context.state import PipelineState
from agent_repl.core.messages import (
    AssistantMessage,
    ContentBlock,
    ImageBlock,
    Message,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agent_repl.core.tokens import IMAGE_TOKENS, cl100k_tokens


def text_cl100k(text: str, state: PipelineState) -> int:
    cached = state.token_cache.get(text)
    if cached is None:
        cached = cl100k_tokens(text)
        state.token_cache[text] = cached
    return cached


def block_cl100k(block: ContentBlock, state: PipelineState) -> tuple[int, int]:
    """(cl100k tokens of the block's text, number of images in it)."""
    if isinstance(block, TextBlock):
        return text_cl100k(block.text, state), 0
    if isinstance(block, ThinkingBlock):
        return text_cl100k(block.thinking, state), 0
    if isinstance(block, ToolUseBlock):
        return text_cl100k(block.name, state) + text_cl100k(json.dumps(block.input, ensure_ascii=False), state), 0
    if isinstance(block, ToolResultBlock):
        if isinstance(block.content, str):
            return text_cl100k(block.content, state), 0
        tokens = images = 0
        for inner in block.content:
            if isinstance(inner, TextBlock):
                tokens += text_cl100k(inner.text, state)
            elif isinstance(inner, ImageBlock):
                images += 1
        return tokens, images
    if isinstance(block, ImageBlock):
        return 0, 1
    return 0, 0


def message_cl100k(message: Message, state: PipelineState) -> tuple[int, int]:
    if isinstance(message, SystemMessage):
        return 0, 0
    blocks = message.content if isinstance(message, AssistantMessage) else message.blocks()
    tokens = images = 0
    for block in blocks:
        t, i = block_cl100k(block, state)
        tokens += t
        images += i
    return tokens, images


def estimate_messages(messages: list[Message], state: PipelineState) -> int:
    tokens = images = 0
    for message in messages:
        t, i = message_cl100k(message, state)
        tokens += t
        images += i
    return round(tokens * state.tokens.ratio) + images * IMAGE_TOKENS


def estimate_message(message: Message, state: PipelineState) -> int:
    return estimate_messages([message], state)


def estimate_request(view: list[Message], state: PipelineState) -> int:
    """The whole request as the API will count it: system and tools plus the view."""
    return round(state.config.fixed_prompt_cl100k * state.tokens.ratio) + estimate_messages(view, state)


def last_usage_index(view: list[Message], state: PipelineState) -> int | None:
    anchor = state.tokens.last_usage_anchor
    if anchor is None or state.tokens.last_usage is None:
        return None
    for index in range(len(view) - 1, -1, -1):
        if view[index].uuid == anchor:
            return index
    return None


def token_count_with_estimation(view: list[Message], state: PipelineState) -> int:
    index = last_usage_index(view, state)
    if index is None:
        return estimate_request(view, state)
    usage = state.tokens.last_usage
    assert usage is not None
    after = estimate_messages(view[index + 1 :], state)
    return max(0, usage.context_tokens() + after - state.snip.tokens_freed_since_usage)
