"""The refused request as the fallback model gets it: the same body on another model, with only
what that model cannot take changed."""

from __future__ import annotations

from agent_repl.core.loop_request import for_fallback
from agent_repl.core.models import model_info

BODY = {
    "model": "claude-sonnet-5-5",
    "max_tokens": 128_000,
    "system": [{"type": "text", "text": "Be terse."}],
    "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    "thinking": {"type": "between_tools"},
}


def test_the_fallback_gets_the_same_messages_its_own_output_cap_and_thinking_off_for_between_tools() -> None:
    body = for_fallback(BODY, "claude-sonnet-4-5")
    assert body["model"] == "claude-sonnet-4-5"
    assert body["max_tokens"] == min(128_000, model_info("claude-sonnet-4-5").max_output_tokens) < 128_000
    assert body["messages"] == BODY["messages"] and body["system"] == BODY["system"]
    assert body["thinking"] == {"type": "disabled"}
    assert BODY["model"] == "claude-sonnet-5-5"  # the original body is left as it was


def test_other_thinking_settings_go_as_they_are() -> None:
    adaptive = {**BODY, "thinking": {"type": "adaptive", "display": "summarized"}, "max_tokens": 1000}
    body = for_fallback(adaptive, "claude-opus-4-5")
    assert body["thinking"] == adaptive["thinking"] and body["max_tokens"] == 1000
