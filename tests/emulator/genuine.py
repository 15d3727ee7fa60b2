"""Hand-written conversations whose thinking blocks look as if the emulator had produced them.

Preserved thinking checks each block's signature against its model and prefix, so a test that
builds a history by hand signs its thinking blocks here, in order, as the API would have.
"""

from __future__ import annotations

import copy
from typing import Any

from agent_repl.core.model.tokens import NEW_TOKENIZER_RATIO
from agent_repl.emulator.blocks import content_blocks
from agent_repl.emulator.signatures import thinking_signature
from agent_repl.emulator.thinking_binding import BindingState, PrefixChain, system_digest, tools_digest
from agent_repl.emulator.tokens import TokenCounter

COUNTER = TokenCounter(NEW_TOKENIZER_RATIO)


def genuine(body: dict[str, Any], model_id: str) -> dict[str, Any]:
    """A copy of `body` with every thinking block signed by `model_id` for its place in it."""
    signed = copy.deepcopy(body)
    state = BindingState(system_digest(signed), tools_digest(signed), PrefixChain())
    for message in signed["messages"]:
        if isinstance(message["content"], str):
            message["content"] = content_blocks(message["content"])
        for block in message["content"]:
            if block.get("type") == "thinking":
                text = block["thinking"]
                block["signature"] = thinking_signature(model_id, text, COUNTER.count_text(text), state.binding())
            state.chain.extend(message["role"], block)
    return signed
