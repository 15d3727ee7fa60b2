"""Conversation rules of §7 that sit above field types, with the exact 400 texts of §5.2.

`validate_create` / `validate_count` run after the field-level schema check (`schema.py`) and the
model lookup; they raise `ApiError` for the first rule a request breaks. Order: tool names,
deferred tools and their references, max_tokens, then each message in turn (empty content, empty
text, duplicate tool_use ids, tool_use/tool_result pairing), then cache breakpoints, then prefill.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from agent_repl.emulator import errors
from agent_repl.emulator.deferred import check_deferred_tools
from agent_repl.emulator.errors import invalid_request

_NOT_CACHEABLE = frozenset({"thinking", "redacted_thinking", "cache_edits"})
_SERVER_TOOL_BLOCKS = frozenset({"server_tool_use", "web_search_tool_result", "web_fetch_tool_result"})


class ModelLimits(Protocol):
    """What validation needs from a model spec (`allows_prefill`, `thinking_types` and
    `forced_tool_choice` are read when present)."""

    id: str
    max_output_tokens: int


def blocks_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's content as a list of blocks (string content is one text block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def validate_create(body: dict[str, Any], spec: ModelLimits, *, continues_paused_turn: bool = False) -> None:
    """`continues_paused_turn`: the last message is a reply that stopped with `pause_turn`, sent
    back as is to continue it (not a prefill)."""
    _check_tool_names(body)
    check_deferred_tools(body)
    max_tokens = int(body["max_tokens"])
    if max_tokens > spec.max_output_tokens:
        raise invalid_request(errors.max_tokens_too_large(max_tokens, spec.max_output_tokens, spec.id))
    _check_model_features(body, spec)
    _check_system(body)
    _check_messages(body["messages"])
    _check_cache_control(body)
    # A compaction request samples nothing after the history.
    if body.get("compaction") is None and not continues_paused_turn:
        _check_prefill(body["messages"], spec)


def validate_count(body: dict[str, Any], spec: ModelLimits) -> None:
    """count_tokens applies the same conversation rules, minus max_tokens (it has none)."""
    _check_tool_names(body)
    check_deferred_tools(body)
    _check_model_features(body, spec)
    _check_system(body)
    _check_messages(body["messages"])
    _check_cache_control(body)
    _check_prefill(body["messages"], spec)


def _check_model_features(body: dict[str, Any], spec: ModelLimits) -> None:
    """Thinking types, forced tool_choice and sampling parameters the model does not take (per the
    model table), and `between_tools` above effort high."""
    thinking = body.get("thinking")
    accepted = getattr(spec, "thinking_types", None)
    if isinstance(thinking, dict) and accepted is not None and thinking["type"] not in accepted:
        raise invalid_request(errors.thinking_type_not_supported(thinking["type"]))
    effort = (body.get("output_config") or {}).get("effort")
    if isinstance(thinking, dict) and thinking["type"] == "between_tools" and effort in ("xhigh", "max"):
        raise invalid_request(errors.BETWEEN_TOOLS_EFFORT.format(effort=effort))
    if not getattr(spec, "sampling_params", True):
        for name in ("temperature", "top_p", "top_k"):
            if name in body:
                raise invalid_request(errors.SAMPLING_NOT_SUPPORTED.format(name=name))
    choice = body.get("tool_choice")
    if (
        isinstance(choice, dict)
        and choice["type"] in ("any", "tool")
        and not getattr(spec, "forced_tool_choice", True)
    ):
        raise invalid_request(errors.FORCED_TOOL_CHOICE_NOT_SUPPORTED)


def _check_tool_names(body: dict[str, Any]) -> None:
    names = [tool.get("name") for tool in body.get("tools") or []]
    if len(names) != len(set(names)):
        raise invalid_request(errors.TOOL_NAMES_NOT_UNIQUE)


def _check_system(body: dict[str, Any]) -> None:
    system = body.get("system")
    if isinstance(system, list):
        _check_texts("system", system)


def _check_texts(scope: str, blocks: list[dict[str, Any]]) -> None:
    """Empty text blocks are refused; whitespace-only text only passes alongside real text."""
    texts = [b.get("text", "") for b in _text_blocks(blocks)]
    if any(text == "" for text in texts):
        raise invalid_request(f"{scope}: {errors.EMPTY_TEXT_BLOCK}")
    if texts and all(not text.strip() for text in texts):
        raise invalid_request(f"{scope}: {errors.WHITESPACE_TEXT_BLOCK}")


def _text_blocks(blocks: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for block in blocks:
        if block.get("type") == "text":
            yield block
        elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
            yield from (inner for inner in block["content"] if inner.get("type") == "text")


def _check_messages(messages: list[dict[str, Any]]) -> None:
    if not messages:
        raise invalid_request("messages: at least one message is required")
    seen_tool_use_ids: set[str] = set()
    last = len(messages) - 1
    for i, message in enumerate(messages):
        content = message.get("content")
        if content in ("", []):
            if i == last and message.get("role") == "assistant":
                continue
            raise invalid_request(errors.empty_message_content(i))
        blocks = blocks_of(message)
        _check_texts("messages", blocks)
        if message.get("role") == "assistant":
            _check_unique_tool_use_ids(i, blocks, seen_tool_use_ids)
            _check_results_follow(i, blocks, messages)
        elif message.get("role") == "user":
            _check_results_expected(i, blocks, messages)


def _check_unique_tool_use_ids(index: int, blocks: list[dict[str, Any]], seen: set[str]) -> None:
    for j, block in enumerate(blocks):
        if block.get("type") != "tool_use":
            continue
        if block["id"] in seen:
            raise invalid_request(errors.duplicate_tool_use_id(index, j))
        seen.add(block["id"])


def _leading_result_ids(blocks: list[dict[str, Any]]) -> set[str]:
    """The tool_result ids at the head of a user message: results must come before any other block."""
    ids: set[str] = set()
    for block in blocks:
        if block.get("type") != "tool_result":
            break
        ids.add(block["tool_use_id"])
    return ids


def _check_results_follow(index: int, blocks: list[dict[str, Any]], messages: list[dict[str, Any]]) -> None:
    wanted = [b["id"] for b in blocks if b.get("type") == "tool_use"]
    if not wanted:
        return
    following = messages[index + 1] if index + 1 < len(messages) else None
    answered: set[str] = set()
    if following is not None and following.get("role") == "user":
        answered = _leading_result_ids(blocks_of(following))
    missing = [tool_id for tool_id in wanted if tool_id not in answered]
    if missing:
        raise invalid_request(errors.missing_tool_results(index, missing))


def _check_results_expected(index: int, blocks: list[dict[str, Any]], messages: list[dict[str, Any]]) -> None:
    previous = messages[index - 1] if index > 0 else None
    offered: set[str] = set()
    if previous is not None and previous.get("role") == "assistant":
        offered = {b["id"] for b in blocks_of(previous) if b.get("type") == "tool_use"}
    first_bad: int | None = None
    unexpected: list[str] = []
    for j, block in enumerate(blocks):
        if block.get("type") == "tool_result" and block["tool_use_id"] not in offered:
            first_bad = j if first_bad is None else first_bad
            unexpected.append(block["tool_use_id"])
    if first_bad is not None:
        raise invalid_request(errors.unexpected_tool_result(index, first_bad, unexpected))


def _check_prefill(messages: list[dict[str, Any]], spec: ModelLimits) -> None:
    if not messages or messages[-1].get("role") != "assistant":
        return
    if getattr(spec, "allows_prefill", True):
        return
    blocks = blocks_of(messages[-1])
    if blocks and all(b.get("type") == "compaction" for b in blocks):
        return  # the compaction-only turn after stop_reason "compaction" is not a prefill
    if any(b.get("type") in _SERVER_TOOL_BLOCKS for b in blocks):
        return  # a server-tool turn sent back after pause_turn is continued, not prefilled
    raise invalid_request(errors.PREFILL_NOT_SUPPORTED)


def breakpoints(body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every explicit cache_control marker as (path of its block, marker), in processing order."""
    for i, tool in enumerate(body.get("tools") or []):
        if tool.get("cache_control"):
            yield f"tools.{i}", tool["cache_control"]
    system = body.get("system")
    if isinstance(system, list):
        for i, block in enumerate(system):
            if block.get("cache_control"):
                yield f"system.{i}", block["cache_control"]
    for i, message in enumerate(body.get("messages") or []):
        for j, block in enumerate(blocks_of(message)):
            if block.get("cache_control"):
                yield f"messages.{i}.content.{j}", block["cache_control"]
            inner = block.get("content") if block.get("type") == "tool_result" else None
            for k, sub in enumerate(inner if isinstance(inner, list) else []):
                if sub.get("cache_control"):
                    yield f"messages.{i}.content.{j}.content.{k}", sub["cache_control"]


def _last_cacheable_block(body: dict[str, Any]) -> dict[str, Any] | None:
    for message in reversed(body.get("messages") or []):
        for block in reversed(blocks_of(message)):
            if block.get("type") not in _NOT_CACHEABLE and not (
                block.get("type") == "text" and not block.get("text")
            ):
                return block
    system = body.get("system")
    if isinstance(system, list) and system:
        return system[-1]
    tools = body.get("tools") or []
    return tools[-1] if tools else None


def _check_cache_control(body: dict[str, Any]) -> None:
    markers = list(breakpoints(body))
    automatic = body.get("cache_control")
    if automatic:
        last = _last_cacheable_block(body)
        explicit = (last or {}).get("cache_control")
        if explicit and explicit.get("ttl", "5m") == automatic.get("ttl", "5m"):
            automatic = None  # already marked with the same TTL: the automatic breakpoint is a no-op
        else:
            markers.append(("", automatic))
    if len(markers) > 4:
        raise invalid_request(errors.too_many_cache_breakpoints(len(markers)))
    seen_short = False
    for path, marker in markers:
        ttl = marker.get("ttl", "5m")
        if ttl == "1h" and seen_short:
            ttl_path = f"{path}.cache_control.ttl" if path else "cache_control.ttl"
            raise invalid_request(errors.ttl_order(ttl_path))
        seen_short = seen_short or ttl == "5m"
