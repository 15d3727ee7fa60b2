"""Hand-built histories stamped as if the query loop had sent them (prefix digests recorded).

The loop records, on every reply entry, the digest of the prompt it was produced after; the
pipeline anchors its estimate on a usage only where those digests still match the view. A test
that builds a history by hand stamps it here, from the view the pipeline projects now.
"""

from __future__ import annotations

from agent_repl.context.projector import Pipeline
from agent_repl.core.api.thinking_prefix import PrefixChain
from agent_repl.core.model.messages import AssistantMessage, Message, wire_block


def stamp_as_sent(pipeline: Pipeline, history: list[Message]) -> None:
    """Give each single-block reply entry of the projected view the digest of what preceded it."""
    wire = pipeline.project(history, dry_run=True).wire
    entries = [m for m in history if isinstance(m, AssistantMessage) and len(m.content) == 1]
    chain = PrefixChain(pipeline.state.config.prompt_seed)
    position = 0
    for message in wire:
        for block in message["content"]:
            if message["role"] == "assistant" and position < len(entries):
                for index in range(position, len(entries)):
                    if wire_block(entries[index].content[0]) == block:
                        entries[index].prefix_digest = chain.value
                        position = index + 1
                        break
            chain.extend(message["role"], block)
