"""Public context editing (§8.1, beta `context-management-2025-06-27`).

`clear_thinking_20251015` drops thinking from older assistant turns; `clear_tool_uses_20250919`
replaces old tool results with a placeholder. Both rewrite the prompt for real (the prefix hash
changes from the first cleared block), unlike cache editing.
"""

from __future__ import annotations

from typing import Any

from agent_repl.emulator.blocks import THINKING_TYPES
from agent_repl.emulator.models import ModelSpec
from agent_repl.emulator.prompt import Draft, Slot, draft_tokens, slot_tokens
from agent_repl.emulator.request_error import EmulatorRequestError
from agent_repl.emulator.tokens import TokenCounter

CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
# Server-side compaction sends `context_management` under its own beta (§8.2).
CONTEXT_MANAGEMENT_BETAS = frozenset({CONTEXT_MANAGEMENT_BETA, "compact-2026-01-12"})
CLEAR_TOOL_USES = "clear_tool_uses_20250919"
CLEAR_THINKING = "clear_thinking_20251015"
CLEARED_RESULT_TEXT = "[Tool result cleared by context management]"
_DEFAULT_TRIGGER = ("input_tokens", 100_000)
_DEFAULT_KEEP_TOOL_USES = 3


def _fail(path: str, message: str) -> EmulatorRequestError:
    return EmulatorRequestError(f"context_management.{path}: {message}")


def _int_setting(
    edit: dict[str, Any], name: str, kinds: tuple[str, ...], path: str
) -> tuple[str, int] | None:
    value = edit.get(name)
    if value is None:
        return None
    if not isinstance(value, dict) or value.get("type") not in kinds:
        raise _fail(
            f"{path}.{name}", f"Input should be an object with type {' or '.join(repr(k) for k in kinds)}"
        )
    number = value.get("value")
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        raise _fail(f"{path}.{name}.value", "Input should be a non-negative integer")
    return str(value["type"]), number


def _live(slot: Slot) -> bool:
    return slot.identity is not None and slot.seen is not None


def clear_thinking(
    draft: Draft, edit: dict[str, Any], spec: ModelSpec, counter: TokenCounter, path: str
) -> dict[str, Any] | None:
    keep = edit.get("keep")
    if keep is None:
        keep_turns: int | None = None if spec.keeps_prior_thinking else 1
    elif keep == "all" or (isinstance(keep, dict) and keep.get("type") == "all"):
        keep_turns = None
    else:
        parsed = _int_setting(edit, "keep", ("thinking_turns",), path)
        assert parsed is not None
        keep_turns = parsed[1]
        if keep_turns < 1:
            raise _fail(f"{path}.keep.value", "Input should be greater than 0")
    if keep_turns is None:
        return None
    turns = [
        m
        for m in draft.messages
        if m.role == "assistant" and any(_live(s) and s.kind in THINKING_TYPES for s in m.slots)
    ]
    cleared_turns = turns[:-keep_turns] if keep_turns else turns
    cleared_tokens = 0
    for message in cleared_turns:
        for slot in message.slots:
            if _live(slot) and slot.kind in THINKING_TYPES:
                cleared_tokens += slot_tokens(slot, counter)
                slot.identity = slot.seen = None
    if not cleared_turns:
        return None
    return {
        "type": CLEAR_THINKING,
        "cleared_thinking_turns": len(cleared_turns),
        "cleared_input_tokens": cleared_tokens,
    }


def _tool_pairs(draft: Draft) -> list[tuple[Slot, Slot | None]]:
    """Every live tool_use with its tool_result slot (if any), oldest first."""
    results: dict[str, Slot] = {}
    for message in draft.messages:
        for slot in message.slots:
            if _live(slot) and slot.kind == "tool_result":
                assert slot.seen is not None
                results[str(slot.seen.get("tool_use_id"))] = slot
    pairs = []
    for message in draft.messages:
        if message.role != "assistant":
            continue
        for slot in message.slots:
            if _live(slot) and slot.kind == "tool_use":
                assert slot.seen is not None
                pairs.append((slot, results.get(str(slot.seen.get("id")))))
    return pairs


def _clears_input(setting: Any, tool_name: str) -> bool:
    if isinstance(setting, list):
        return tool_name in setting
    return setting is True


def clear_tool_uses(
    draft: Draft, edit: dict[str, Any], counter: TokenCounter, path: str
) -> dict[str, Any] | None:
    trigger = _int_setting(edit, "trigger", ("input_tokens", "tool_uses"), path) or _DEFAULT_TRIGGER
    keep = _int_setting(edit, "keep", ("tool_uses",), path)
    keep_count = keep[1] if keep else _DEFAULT_KEEP_TOOL_USES
    at_least = _int_setting(edit, "clear_at_least", ("input_tokens",), path)
    exclude = edit.get("exclude_tools") or []
    inputs_setting = edit.get("clear_tool_inputs")
    if not isinstance(exclude, list):
        raise _fail(f"{path}.exclude_tools", "Input should be a valid list")
    pairs = _tool_pairs(draft)
    measure = draft_tokens(draft, counter) if trigger[0] == "input_tokens" else len(pairs)
    if measure <= trigger[1]:
        return None
    candidates = pairs[: len(pairs) - keep_count] if keep_count else pairs
    planned: list[tuple[Slot, Slot | None, bool]] = []
    saved = 0
    for use, result in candidates:
        assert use.seen is not None
        name = str(use.seen.get("name", ""))
        if name in exclude:
            continue
        clear_result = (
            result is not None
            and result.seen is not None
            and result.seen.get("content") not in (None, "", CLEARED_RESULT_TEXT)
        )
        clear_input = _clears_input(inputs_setting, name) and bool(use.seen.get("input"))
        if not clear_result and not clear_input:
            continue
        if clear_result:
            assert result is not None and result.seen is not None
            saved += slot_tokens(result, counter) - counter.count_block(
                {**result.seen, "content": CLEARED_RESULT_TEXT}
            )
        if clear_input:
            saved += slot_tokens(use, counter) - counter.count_block({**use.seen, "input": {}})
        planned.append((use, result if clear_result else None, clear_input))
    if not planned or (at_least is not None and saved < at_least[1]):
        return None
    for use, result, clear_input in planned:
        if result is not None and result.seen is not None:
            result.seen = result.identity = {**result.seen, "content": CLEARED_RESULT_TEXT}
        if clear_input and use.seen is not None:
            use.seen = use.identity = {**use.seen, "input": {}}
    return {"type": CLEAR_TOOL_USES, "cleared_tool_uses": len(planned), "cleared_input_tokens": saved}


def apply_context_management(
    draft: Draft, config: Any, spec: ModelSpec, counter: TokenCounter, *, thinking_on: bool = True
) -> list[dict[str, Any]]:
    """Apply the request's edits in order; returns the `applied_edits` entries (§8.1).

    `thinking_on`: whether the model thinks on this request; clearing thinking needs it on."""
    if not isinstance(config, dict):
        raise EmulatorRequestError("context_management: Input should be a valid dictionary")
    edits = config.get("edits") or []
    if not isinstance(edits, list):
        raise _fail("edits", "Input should be a valid list")
    kinds = [e.get("type") if isinstance(e, dict) else None for e in edits]
    if (
        CLEAR_THINKING in kinds
        and CLEAR_TOOL_USES in kinds
        and kinds.index(CLEAR_THINKING) > kinds.index(CLEAR_TOOL_USES)
    ):
        raise _fail("edits", f"`{CLEAR_THINKING}` must be listed before `{CLEAR_TOOL_USES}`")
    applied: list[dict[str, Any]] = []
    for index, edit in enumerate(edits):
        path = f"edits.{index}"
        if not isinstance(edit, dict):
            raise _fail(path, "Input should be a valid dictionary")
        if edit.get("type") == CLEAR_THINKING:
            if not thinking_on:
                raise _fail(
                    f"{path}.type",
                    f"`{CLEAR_THINKING}` requires thinking to be enabled; set `thinking` to "
                    "`adaptive` (or `enabled`) or remove this edit",
                )
            entry = clear_thinking(draft, edit, spec, counter, path)
        elif edit.get("type") == CLEAR_TOOL_USES:
            entry = clear_tool_uses(draft, edit, counter, path)
        elif edit.get("type") == "compact_20260112":
            entry = None  # server-side compaction is not emulated
        else:
            raise _fail(f"{path}.type", f"unknown edit type {edit.get('type')!r}")
        if entry is not None:
            applied.append(entry)
    return applied


def strip_prior_thinking(draft: Draft) -> None:
    """Drop thinking from assistant turns before the last real user turn (models that do so, §7)."""
    last_user = -1
    for index, message in enumerate(draft.messages):
        live = [s for s in message.slots if _live(s)]
        if message.role == "user" and live and all(s.kind != "tool_result" for s in live):
            last_user = index
    for message in draft.messages[:last_user]:
        if message.role == "assistant":
            for slot in message.slots:
                if slot.kind in THINKING_TYPES:
                    slot.identity = slot.seen = None
