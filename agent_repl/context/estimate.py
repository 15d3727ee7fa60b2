"""Token estimates for the view, and `token_count_with_estimation`.

The count the thresholds use is the last response's usage (input + cache read + cache write +
output: what the API itself counted) plus an estimate of everything appended after that
response, minus what snip freed since (the usage cannot see it). Estimates are cl100k counts
(offline) times a ratio that starts from the model's tokenizer family (agent_repl.core.model.tokens)
and is then learned from the API's own counts during the session. Counts are
memoized by text, so the cost of a turn follows what changed, not the history's length.
"""

from __future__ import annotations

from agent_repl.context.state import PipelineState
from agent_repl.core.model.messages import Message
from agent_repl.core.model.tokens import IMAGE_TOKENS


def text_cl100k(text: str, state: PipelineState) -> int:
    return state.facts.text_tokens(text)


def message_cl100k(message: Message, state: PipelineState) -> tuple[int, int]:
    """(cl100k tokens of the entry's text, number of images in it)."""
    facts = state.facts.get(message)
    return facts.cl100k, facts.images


def estimate_messages(messages: list[Message], state: PipelineState) -> int:
    tokens = images = 0
    for message in messages:
        t, i = message_cl100k(message, state)
        tokens += t
        images += i
    return round(tokens * state.tokens.ratio) + images * IMAGE_TOKENS


def estimate_message(message: Message, state: PipelineState) -> int:
    return estimate_messages([message], state)


def fixed_prompt_cl100k(state: PipelineState) -> int:
    """cl100k tokens of the system prompt and the tool definitions."""
    return sum(state.facts.text_tokens(text) for text in state.config.fixed_prompt)


def estimate_request(view: list[Message], state: PipelineState) -> int:
    """The whole request as the API will count it: system and tools plus the view."""
    return round(fixed_prompt_cl100k(state) * state.tokens.ratio) + estimate_messages(view, state)


def last_usage_index(view: list[Message], state: PipelineState) -> int | None:
    anchor = state.tokens.last_usage_anchor
    if anchor is None or state.tokens.last_usage is None or not state.tokens.anchor_describes_view:
        return None
    for index in range(len(view) - 1, -1, -1):
        if view[index].uuid == anchor:
            return index
    return None


def freed_since_usage(state: PipelineState) -> int:
    """Tokens snip, collapse and microcompact took out of the view (or, with cache editing, out of
    the server's cached prefix) after the last usage, which still counts them."""
    collapse = state.collapse
    collapsed = collapse.freed_since_usage if collapse.freed_anchor == state.tokens.last_usage_anchor else 0
    return state.snip.tokens_freed_since_usage + collapsed + state.microcompact.freed_since_usage


def server_cleared_in(view: list[Message], state: PipelineState) -> int:
    """What the server-side clears take out of this view (agent_repl.context.server_clear), estimated."""
    cleared = state.microcompact.server_cleared
    if not cleared:
        return 0
    facts = state.facts
    return sum(cleared.get(tid, 0) for m in view if m.type == "user" for tid in facts.get(m).result_ids)


def token_count_with_estimation(view: list[Message], state: PipelineState) -> int:
    index = last_usage_index(view, state)
    if index is None:
        return max(0, estimate_request(view, state) - server_cleared_in(view, state))
    usage = state.tokens.last_usage
    assert usage is not None
    after = estimate_messages(view[index + 1 :], state)
    return max(0, usage.context_tokens() + after - freed_since_usage(state))
