"""Cache editing: our own beta for deleting old tool results without a cache miss.

Not part of the public API (§10). With the `cache-editing-agent-repl` beta a tool_result may
carry `cache_reference` (equal to its tool_use_id) and a user message may carry
`{"type": "cache_edits", "edits": [{"type": "delete", "cache_reference": ID}]}`. A deleted
result loses its content in what the model sees and in the input tokens, while the prefix
hash keeps the original block, so the rest of the cached prefix still reads.
"""

from __future__ import annotations

from typing import Any

from agent_repl.emulator.prompt import Draft, Slot, slot_tokens
from agent_repl.emulator.request_error import EmulatorRequestError
from agent_repl.emulator.tokens import TokenCounter

CACHE_EDITING_BETA = "cache-editing-agent-repl"


def reject_cache_editing_fields(draft: Draft) -> None:
    """Without the beta these fields are unknown inputs, as on the public API."""
    for message in draft.messages:
        for slot in message.slots:
            if slot.cache_reference is not None:
                raise EmulatorRequestError(
                    f"messages.{slot.message_index}.content.{slot.block_index}.cache_reference: "
                    "Extra inputs are not permitted"
                )
    for edit in draft.edit_blocks:
        raise EmulatorRequestError(
            f"messages.{edit.message_index}.content.{edit.block_index}: `cache_edits` blocks require the "
            f"`{CACHE_EDITING_BETA}` value in the `anthropic-beta` header"
        )


def _references(draft: Draft) -> dict[str, Slot]:
    found: dict[str, Slot] = {}
    for message in draft.messages:
        for slot in message.slots:
            if slot.cache_reference is None:
                continue
            where = f"messages.{slot.message_index}.content.{slot.block_index}"
            block = slot.identity or {}
            if block.get("type") != "tool_result":
                raise EmulatorRequestError(f"{where}.cache_reference: only `tool_result` blocks may carry it")
            if slot.cache_reference != block.get("tool_use_id"):
                raise EmulatorRequestError(
                    f"{where}.cache_reference: must equal the block's tool_use_id ({block.get('tool_use_id')})"
                )
            found[slot.cache_reference] = slot
    return found


def _deletions(draft: Draft, references: dict[str, Slot]) -> list[Slot]:
    targets: dict[str, Slot] = {}
    for edit_block in draft.edit_blocks:
        where = f"messages.{edit_block.message_index}.content.{edit_block.block_index}"
        if draft.messages[edit_block.message_index].role != "user":
            raise EmulatorRequestError(f"{where}: `cache_edits` blocks are only allowed in user messages")
        edits: Any = edit_block.block.get("edits")
        if not isinstance(edits, list):
            raise EmulatorRequestError(f"{where}.edits: Input should be a valid list")
        for k, edit in enumerate(edits):
            if not isinstance(edit, dict) or edit.get("type") != "delete":
                raise EmulatorRequestError(f"{where}.edits.{k}.type: Input should be 'delete'")
            reference = edit.get("cache_reference")
            if not isinstance(reference, str):
                raise EmulatorRequestError(f"{where}.edits.{k}.cache_reference: Field required")
            if reference not in references:
                raise EmulatorRequestError(
                    f"{where}.edits.{k}.cache_reference: unknown cache_reference '{reference}': "
                    "no tool_result in this request carries it"
                )
            targets[reference] = references[reference]
    return list(targets.values())


def apply_cache_edits(draft: Draft, counter: TokenCounter) -> int:
    """Delete the referenced results' content from what the model sees; returns the tokens removed.

    The count covers every delete present in the request: clients re-send their pinned edits each
    turn, so it is cumulative and the client subtracts its own baseline.
    """
    deleted = 0
    for slot in _deletions(draft, _references(draft)):
        assert slot.seen is not None
        before = slot_tokens(slot, counter)
        slot.seen = {k: v for k, v in slot.seen.items() if k != "content"}
        deleted += before - slot_tokens(slot, counter)
    return deleted
