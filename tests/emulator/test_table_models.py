"""The emulator serves every model of the agent's own table, and counts with each family's ratio."""

from __future__ import annotations

import anthropic
import pytest

from agent_repl.contract import table_models
from agent_repl.core.api.models import model_info
from agent_repl.core.model.tokens import DEFAULT_CLAUDE_RATIO, NEW_TOKENIZER_RATIO, cl100k_tokens

TEXT = "The quick brown fox jumps over the lazy dog, then reads the whole manual twice. " * 40


def test_every_table_model_is_listed_described_and_answers(client: anthropic.Anthropic):
    listed = {m.id for m in client.models.list(limit=1000)}
    for model in table_models():
        assert model in listed, model
        described = client.models.retrieve(model)
        assert described.max_input_tokens == model_info(model).context_window, model
        assert described.max_tokens == model_info(model).max_output_tokens, model
        reply = client.messages.create(
            model=model, max_tokens=64, messages=[{"role": "user", "content": "hi"}]
        )
        assert reply.model == model and reply.content, model


def test_count_tokens_uses_the_models_tokenizer_family(client: anthropic.Anthropic):
    def count(model: str) -> int:
        return client.messages.count_tokens(
            model=model, messages=[{"role": "user", "content": TEXT}]
        ).input_tokens

    older, newer = count("claude-haiku-4-5"), count("claude-haiku-5-5")
    # The same text, about 30% more tokens on the newer tokenizer; the agent estimates with the same ratios.
    assert newer / older == pytest.approx(NEW_TOKENIZER_RATIO / DEFAULT_CLAUDE_RATIO, rel=0.02)
    assert abs(older - round(cl100k_tokens(TEXT) * DEFAULT_CLAUDE_RATIO)) <= 10
    assert count("claude-opus-4-7") == count("claude-sonnet-5") == newer
    assert count("claude-opus-4-6") == older
