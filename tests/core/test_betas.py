"""The `anthropic-beta` header is read from the request body: every beta feature a body carries
names its beta, and a plain body names none (it goes through the SDK's non-beta call)."""

from __future__ import annotations

from typing import Any

from agent_repl.core.api.betas import (
    CACHE_EDITING_BETA,
    CONTEXT_MANAGEMENT_BETA,
    ON_DEMAND_COMPACTION_BETA,
    THINKING_BINDING_BETA,
    THRESHOLD_COMPACTION_BETA,
    request_betas,
)


def body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-5-5", "max_tokens": 100, "messages": messages, **extra}


PROMPT = {"role": "user", "content": [{"type": "text", "text": "Go on."}]}
SUMMARY = {"role": "assistant", "content": [{"type": "compaction", "content": "Earlier: ...", "signature": "s"}]}


def test_a_plain_request_names_no_beta() -> None:
    assert request_betas(body([PROMPT], thinking={"type": "adaptive"})) == []


def test_a_request_that_sends_an_api_summary_back_names_the_compaction_beta() -> None:
    assert request_betas(body([SUMMARY, PROMPT])) == [ON_DEMAND_COMPACTION_BETA]


def test_a_summary_request_names_it_once() -> None:
    assert request_betas(body([SUMMARY, PROMPT], compaction={"type": "summarize"})) == [ON_DEMAND_COMPACTION_BETA]


def test_context_management_edits_name_their_betas() -> None:
    clear = {"type": "clear_tool_uses_20250919"}
    assert request_betas(body([PROMPT], context_management={"edits": [clear]})) == [CONTEXT_MANAGEMENT_BETA]
    threshold = {"edits": [{"type": "compact_20260112"}]}
    # A summary the threshold feature wrote goes back under that feature's beta.
    assert request_betas(body([SUMMARY, PROMPT], context_management=threshold)) == [THRESHOLD_COMPACTION_BETA]


def test_cache_edits_and_references_name_the_cache_editing_beta() -> None:
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "x", "cache_reference": "t1"}
    assert request_betas(body([{"role": "user", "content": [result]}])) == [CACHE_EDITING_BETA]
    edits = {"type": "cache_edits", "edits": [{"type": "delete", "cache_reference": "t1"}]}
    assert request_betas(body([{"role": "user", "content": [edits]}])) == [CACHE_EDITING_BETA]


def test_block_binding_names_its_beta_and_everything_comes_once() -> None:
    binding = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
    clear = {"edits": [{"type": "clear_thinking_20251015"}, {"type": "clear_tool_uses_20250919"}]}
    betas = request_betas(body([SUMMARY, SUMMARY, PROMPT], thinking=binding, context_management=clear))
    assert betas == [CONTEXT_MANAGEMENT_BETA, THINKING_BINDING_BETA, ON_DEMAND_COMPACTION_BETA]


def test_the_updates_display_names_its_beta_and_the_ga_displays_none() -> None:
    from agent_repl.core.api.betas import THINKING_DISPLAY_UPDATES_BETA

    updates = body([PROMPT], thinking={"type": "adaptive", "display": "updates"})
    assert request_betas(updates) == [THINKING_DISPLAY_UPDATES_BETA]
    assert request_betas(body([PROMPT], thinking={"type": "adaptive", "display": "summarized"})) == []
