"""The refused request as the fallback model gets it: the same body on another model, with its
thinking, effort and output cap rebuilt for that model."""

from __future__ import annotations

from types import SimpleNamespace

from agent_repl.core.api.models import model_info
from agent_repl.core.loop.request import for_fallback

CLEAR = {"edits": [{"type": "clear_thinking_20251015"}, {"type": "clear_tool_uses_20250919"}]}
BODY = {
    "model": "claude-sonnet-5-5",
    "max_tokens": 128_000,
    "system": [{"type": "text", "text": "Be terse."}],
    "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    "thinking": {"type": "adaptive", "display": "summarized"},
    "output_config": {"effort": "xhigh"},
    "context_management": CLEAR,
}

def settings(**fields: object) -> SimpleNamespace:
    base = {"effort": "xhigh", "thinking": "adaptive", "thinking_display": "summarized", "session_effort": None, "model_effort": {}}
    return SimpleNamespace(**{**base, **fields})


SETTINGS = settings()


def test_a_fallback_that_does_not_think_by_default_gets_no_thinking_no_effort_it_lacks_and_its_own_cap() -> None:
    body = for_fallback(BODY, "claude-sonnet-4-5", SETTINGS)
    assert body["model"] == "claude-sonnet-4-5"
    assert body["max_tokens"] == model_info("claude-sonnet-4-5").max_output_tokens < 128_000
    assert body["messages"] == BODY["messages"] and body["system"] == BODY["system"]
    assert "thinking" not in body and "output_config" not in body
    assert body["context_management"] == {"edits": [{"type": "clear_tool_uses_20250919"}]}
    assert BODY["model"] == "claude-sonnet-5-5" and BODY["context_management"] == CLEAR  # left as it was


def test_a_fallback_that_thinks_by_default_keeps_the_thinking_fields() -> None:
    info = model_info("claude-opus-5")
    assert info.thinking_default_on
    body = for_fallback(BODY, "claude-opus-5", settings(effort="high"))
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "high"} and body["context_management"] == CLEAR
    # The level /effort saved for the fallback model is the one it gets.
    saved = for_fallback(BODY, "claude-opus-5", settings(effort="high", model_effort={"claude-opus-5": "low"}))
    assert saved["output_config"] == {"effort": "low"}
